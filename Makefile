# The two commands of the quick start: `make serve` and `make test`. Both install libyaml-dev and
# zlib1g-dev when they are missing (as root, with apt), or say how to.

SWIFT ?= swift
CONFIG ?= config.yaml
BENCH_DIR ?= .bench
BENCH_EVENTS ?= 1000000

.PHONY: serve test fuzz bench build release deps clean

deps:
	@if ! pkg-config --exists yaml-0.1 zlib 2>/dev/null; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
			echo "installing libyaml-dev and zlib1g-dev (and pkg-config)…"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libyaml-dev zlib1g-dev pkg-config >/dev/null; \
		else \
			echo "libyaml or zlib is missing: run 'sudo apt-get install libyaml-dev zlib1g-dev pkg-config' (Debian/Ubuntu) or 'brew install libyaml zlib pkg-config' (macOS)"; \
			exit 1; \
		fi; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

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
bench: release
	@mkdir -p $(BENCH_DIR)
	@[ -f $(BENCH_DIR)/log-v2-$(BENCH_EVENTS).jsonl ] || .build/release/AnnouncementsBench generate --events $(BENCH_EVENTS) --out $(BENCH_DIR)/log-v2-$(BENCH_EVENTS).jsonl
	BENCH_DIR=$(BENCH_DIR) BENCH_EVENTS=$(BENCH_EVENTS) scripts/bench.sh

clean:
	rm -rf .build $(BENCH_DIR)
