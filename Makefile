# cuasd — the two commands a new machine needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/cuasd
PKGS    := ./...
RUNARGS ?=

.PHONY: all build run test vet unit bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/cuasd

# Fetches modules, builds, starts with the embedded NATS + JetStream and
# prints the URL to open.
run: build
	./$(BIN) serve $(RUNARGS)

# Everything CI runs: vet, the race-enabled test suite.
test: vet unit

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# Benchmarks of the hot paths; results are recorded in BENCHMARKS.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 $(PKGS)

# Longer fuzzing of every parser (FUZZTIME per target).
FUZZTIME ?= 60s
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf bin
