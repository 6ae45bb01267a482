# The two commands of the quick start: `make serve` and `make test`. Both install libyaml-dev when
# it is missing (as root, with apt), or say how to.

SWIFT ?= swift
CONFIG ?= config.yaml
BENCH_DIR ?= .bench
BENCH_EVENTS ?= 1000000

.PHONY: serve test fuzz bench build release deps clean

deps:
	@if ! pkg-config --exists yaml-0.1 2>/dev/null; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
			echo "installing libyaml-dev (and pkg-config)…"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libyaml-dev pkg-config >/dev/null; \
		else \
			echo "libyaml is missing: run 'sudo apt-get install libyaml-dev pkg-config' (Debian/Ubuntu) or 'brew install libyaml pkg-config' (macOS)"; \
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

test: deps
	$(SWIFT) test

# schemathesis against a live release server and the OpenAPI document; then the log must verify.
fuzz: release
	scripts/api-fuzz.sh

bench: release
	@mkdir -p $(BENCH_DIR)
	@[ -f $(BENCH_DIR)/log-$(BENCH_EVENTS).jsonl ] || .build/release/AnnouncementsBench generate --events $(BENCH_EVENTS) --out $(BENCH_DIR)/log-$(BENCH_EVENTS).jsonl
	.build/release/AnnouncementsBench replay $(BENCH_DIR)/log-$(BENCH_EVENTS).jsonl
	.build/release/AnnouncementsBench startup $(BENCH_DIR)/log-$(BENCH_EVENTS).jsonl
	.build/release/AnnouncementsBench append --dir $(BENCH_DIR)/append
	scripts/http-bench.sh

clean:
	rm -rf .build $(BENCH_DIR)
