# graphfed: `make demo` runs the main job, `make test` runs the tests.
# Go (1.26+) is the only prerequisite; modules come from the Go module proxy.

GO      ?= go
BIN     := bin/graphfed
SHARED  ?= ../shared
RUNS    ?= runs

.PHONY: all build demo test test-short bench fuzz vet fmt clean deps

all: build

deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26+ is required: https://go.dev/dl/"; exit 1; }
	$(GO) mod download

build: deps
	$(GO) build -o $(BIN) ./cmd/graphfed

# The main job: a generated 24-bank AML world, CE-FedGNN with private
# cross-bank embeddings over an embedded NATS server; the run directory
# holds summary.json, rounds.csv, f1.png, epsilon.png, audit.txt and the ledger.
demo: build
	@mkdir -p $(RUNS)
	$(BIN) sim --scenario aml --seed 1 --out $(RUNS)/demo --log-level warn
	@echo "run directory: $(RUNS)/demo"

# Unit, golden, fuzz-seed, process and real-data tests (real data tests skip
# with a message when $(SHARED) is absent).
test: deps vet
	$(GO) test -count=1 -timeout 15m ./...

test-short: deps
	$(GO) test -short -count=1 ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt needed"; exit 1; }

bench: deps
	$(GO) test -run XXX -bench . -benchmem ./gnn/ ./aml/edgegnn/ ./bus/ ./privacy/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin $(RUNS)
