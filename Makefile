# The two commands of README.md's "Run it": `make serve` and `make test`. Both install libyaml-dev and
# zlib1g-dev (and on Linux libcurl4-openssl-dev) when they are missing (as root, with apt), or say how to.

SWIFT ?= swift
CONFIG ?= config.yaml
BENCH_DIR ?= .bench
BENCH_EVENTS ?= 1000000
PREFIX ?= /usr/local

# What `deps` checks with pkg-config, and installs with apt when it is missing.
DEPS_PKGCONFIG = yaml-0.1 zlib
DEPS_APT = libyaml-dev zlib1g-dev pkg-config
# On Linux the release binaries carry the Swift runtime (stdlib, Foundation, Dispatch) in them, so
# that `make install` copies one file that runs where no Swift is installed; only the system's own
# libraries stay shared: libyaml, zlib, and libcurl (whose -dev package Foundation's URLSession needs
# to link). One flag for every release target, so that serve, fuzz, bench and install share one build.
# macOS has the Swift runtime in the OS.
ifeq ($(shell uname -s),Linux)
STATIC_STDLIB ?= --static-swift-stdlib
DEPS_PKGCONFIG += libcurl
DEPS_APT += libcurl4-openssl-dev
endif

.PHONY: serve test fuzz bench bench-cores build release install deps clean

deps:
	@if ! pkg-config --exists $(DEPS_PKGCONFIG) 2>/dev/null; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
			echo "installing $(DEPS_APT)…"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS_APT) >/dev/null; \
		else \
			echo "a library is missing ($(DEPS_PKGCONFIG)): run 'sudo apt-get install $(DEPS_APT)' (Debian/Ubuntu) or 'brew install libyaml pkgconf' (macOS)"; \
			exit 1; \
		fi; \
	fi

build: deps
	$(SWIFT) build

# The server's binary only (`make serve`, `make install`, `make fuzz`): not the benchmark's.
release: deps
	$(SWIFT) build -c release --product announcements $(STATIC_STDLIB)

# The release binary, stripped of its symbols, as $(PREFIX)/bin/announcements (PREFIX=/usr/local
# by default; DESTDIR for a package), and in $(PREFIX)/share/announcements the default config and the systemd unit to copy
# (deploy/announcements.service says where, and what to change). Where it runs it needs no Swift,
# only libyaml, zlib and libcurl (Debian: libyaml-0-2 zlib1g libcurl4); scripts/deploy-check.sh
# BINARY checks that.
install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/announcements
	install -m 0755 -s .build/release/announcements $(DESTDIR)$(PREFIX)/bin/announcements
	install -m 0644 config.yaml $(DESTDIR)$(PREFIX)/share/announcements/config.yaml
	sed 's|/usr/local/|$(PREFIX)/|g' deploy/announcements.service > $(DESTDIR)$(PREFIX)/share/announcements/announcements.service

# The HTTP API on the default configuration (127.0.0.1:8080); Ctrl-C stops it.
serve: release
	.build/release/announcements serve --config $(CONFIG)

# swift test, with a throwaway PostgreSQL for the tests that need one (scripts/test.sh says how;
# it is installed when missing, as root, with apt; without it those tests are skipped, and said so).
test: deps
	SWIFT=$(SWIFT) scripts/test.sh

# schemathesis against a live release server and the OpenAPI document; then the log must verify.
fuzz: release
	scripts/api-fuzz.sh

# Every benchmark, and the goals of issue 14 met or not (scripts/bench.sh says what runs, and the
# environment variables that shorten it). wrk and PostgreSQL are installed when missing (as root,
# with apt); without them their comparisons are skipped, and said so.
bench: deps
	$(SWIFT) build -c release $(STATIC_STDLIB)
	@mkdir -p $(BENCH_DIR)
	@[ -f $(BENCH_DIR)/log-v3-$(BENCH_EVENTS).jsonl ] || .build/release/AnnouncementsBench generate --events $(BENCH_EVENTS) --out $(BENCH_DIR)/log-v3-$(BENCH_EVENTS).jsonl
	BENCH_DIR=$(BENCH_DIR) BENCH_EVENTS=$(BENCH_EVENTS) scripts/bench.sh

# Issue 37's goals 1-3 with the server pinned to 2, 4 and 8 cores (scripts/cores-bench.sh), on a
# machine with at least 12 cores; on a smaller one it says so, and builds nothing.
bench-cores: deps
	@if scripts/cores-bench.sh --can-run; then \
		$(SWIFT) build -c release $(STATIC_STDLIB) && BENCH_DIR=$(BENCH_DIR) scripts/cores-bench.sh; \
	fi

clean:
	rm -rf .build $(BENCH_DIR)
