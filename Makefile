# cuasd — the two commands a new machine needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/cuasd
PKGS    := ./...
# make run RUNARGS="--http-addr 127.0.0.1:9090" adds flags and keeps the
# demo traffic; make run DEMO= runs without it (issue 24).
DEMO    ?= --demo
RUNARGS ?=

.PHONY: all build run test vet lint unit e2e fuzz-short bench bench-pipeline fuzz test-cluster faults vulncheck web-vendor lint-openapi clean bench-compare bench-outputs

all: build

build:
	$(GO) build -o $(BIN) ./cmd/cuasd

# Fetches modules, builds, starts with the embedded NATS + JetStream and the
# demo traffic simulator, and prints the URL to open.
run: build
	./$(BIN) serve $(DEMO) $(RUNARGS)

# Everything CI runs: vet, the race-enabled test suite, a short fuzz of every
# parser, and the map in a real browser.
test: vet unit fuzz-short e2e

vet:
	$(GO) vet $(PKGS)

# go.mod tidy, gofmt, go vet, staticcheck (pinned, from the module proxy) and the
# function-size check of internal/codecheck (60 lines, complexity 15).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.7.0
lint: vet lint-openapi
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) test -count=1 ./internal/codecheck/

# The merged OpenAPI document through two independent linters, @redocly/cli
# (issue 24) and Stoplight's @stoplight/spectral-cli with spectral:oas
# (issue 34; a warning fails too), pinned in
# httpapi/openapi/lint/package-lock.json. Without npm
# it is skipped, saying so, except under CI=true where that is a failure.
lint-openapi:
	@if ! command -v npm >/dev/null 2>&1; then \
	  if [ "$$CI" = true ]; then echo "lint-openapi: npm is required under CI=true" >&2; exit 1; fi; \
	  echo "lint-openapi: SKIPPED, npm is not installed"; exit 0; \
	fi; \
	mkdir -p out && $(GO) run ./httpapi/openapi/lint/dump out/openapi.json && \
	cd httpapi/openapi/lint && npm ci --no-audit --no-fund --loglevel=error && \
	npx --no-install redocly lint --config redocly.yaml --format=stylish ../../../out/openapi.json && \
	npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity=warn ../../../out/openapi.json

unit:
	$(GO) test -race -count=1 -timeout 25m $(PKGS)

# The map in Debian's Chromium via playwright-core (needs node >= 20 and
# /usr/bin/chromium; .ci/run installs the browser).
e2e:
	cd web/e2e && npm ci --no-audit --no-fund && npm test

# Every fuzz target for FUZZSHORT (make test) or FUZZTIME (make fuzz).
FUZZSHORT ?= 3s
FUZZTIME  ?= 60s
fuzz-short:
	@FT=$(FUZZSHORT) GO=$(GO) bash scripts/fuzz.sh $(PKGS)

fuzz:
	@FT=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh $(PKGS)

# Benchmarks of the hot paths; results are recorded in BENCHMARKS.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m $(PKGS)

# The whole pipeline under load on an embedded instance: sustained frames/s
# (batched and one frame per message) and frame-to-track latency.
bench-pipeline:
	CUAS_BENCH_PIPELINE=1 $(GO) test -count=1 -v -timeout 20m -run 'TestPipelineThroughputAndLatency|TestIntakeThroughput' ./internal/pipelinebench

# Three nats-server processes as a JetStream cluster, two cuasd instances,
# faults injected mid-stream (see deploy/ and docs/OPERATIONS.md).
test-cluster:
	CUAS_CLUSTER_TEST=1 $(GO) test -count=1 -v -timeout 10m -run TestCluster ./internal/clustertest/

# Issue 32's fault suite: real cuasd processes (demo, Beast push, webhook,
# mosquitto, CoT, SBS, history, NATS events) under SIGSTOP, a restarted
# nats-server of a cluster, a full data filesystem (root: a tmpfs) and an
# 8 MB flood with an _INBOX.> sniffer; prints the recovery times and the
# peak memory (also written to out/faults.txt). About 6 minutes.
# FAULT_RUNS runs the suite that many times in a row, each in a new
# process, stopping at the first failure (CI runs it 3 times: issue 32's
# "three runs in a row"); each run's figures go to out/faults-N.txt.
FAULT_RUNS ?= 1
faults:
	mkdir -p out
	$(GO) test -c -o out/clustertest.test ./internal/clustertest/
	set -e; for n in $$(seq 1 $(FAULT_RUNS)); do \
	  echo "fault suite run $$n of $(FAULT_RUNS)"; \
	  (cd internal/clustertest && CUAS_FAULT_TEST=1 CUAS_FAULT_SUMMARY=$(CURDIR)/out/faults-$$n.txt \
	    $(CURDIR)/out/clustertest.test -test.count=1 -test.v -test.timeout 9m -test.run TestFaultSuite); \
	done

# govulncheck over every package (pinned, from the module proxy); says
# "NOT CHECKED" when the vulnerability database cannot be reached.
vulncheck:
	GO=$(GO) scripts/vulncheck.sh

# Refresh the vendored front-end files (Leaflet, world outline) from npm.
web-vendor:
	bash web/vendor.sh

clean:
	rm -rf bin

# The same real Beast capture (repeated) into cuasd and Debian's
# dump1090-mutability in one run: wall rate, frames per CPU-second, ratio.
# What history and per-message SBS add to the pipeline at its benchmark
# rate (issue 30): PAIRS pairs of 15-s runs, with and without them, each
# in a process of its own (~45 s a pair).
PAIRS ?= 8
bench-outputs:
	CUAS_BENCH_PIPELINE=1 CUAS_BENCH_OUTPUT_PAIRS=$(PAIRS) $(GO) test -count=1 -v -timeout 60m -run TestOutputsPaired ./internal/pipelinebench

bench-compare:
	CUAS_BENCH_COMPARE=1 $(GO) test -count=1 -v -timeout 20m -run TestCompareWithDump1090 ./internal/pipelinebench
