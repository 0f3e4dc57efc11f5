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

# The main job. Until the AML world lands it is a federated simulation on a
# generated contextual stochastic block model: 8 clients, FedAvg vs Local.
demo: build
	@mkdir -p $(RUNS)
	$(BIN) sim --scenario csbm --algo fedavg --clients 8 --partition louvain --rounds 40 --seed 1 --out $(RUNS)/demo-fedavg --log-level warn
	$(BIN) sim --scenario csbm --algo local  --clients 8 --partition louvain --rounds 40 --seed 1 --out $(RUNS)/demo-local --log-level warn
	@if [ -d $(SHARED)/datasets/cora ]; then \
		$(BIN) train --dataset $(SHARED)/datasets/cora --model gcn; \
	fi

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
	$(GO) test -run XXX -bench . -benchmem ./gnn/ ./bus/ ./privacy/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin $(RUNS)
