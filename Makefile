# ytrend — every target installs what it needs from go.mod (Go module proxy).
SHELL := /bin/bash
GO    ?= go
BIN   := bin/ytrend
PKGS  := ./...
# A count, not a duration: Go 1.26's fuzz coordinator can report a bare
# "context deadline exceeded" when a -fuzztime duration ends while a worker
# is mid-input on a loaded machine (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 3000x
# Parallel tests per package in the race run. Go's default is GOMAXPROCS
# (2 here), but quota's and cmd/ytrend's parallel tests mostly wait on
# real Redis topologies, leases, cron ticks and child processes (0.5-0.6
# of a core each): 4 at once took the two from 144 s to 119 s at the same
# CPU time (BENCHMARKS.md, issue 21).
TESTPARALLEL ?= 4
# -trimpath leaves the checkout's directory out of every build: without it
# the go command keys the project's packages by their directory, so each
# fresh clone (CI's) compiled them all again, under vet, -race, the plain
# run and each fuzz target. Failure traces then name files by import path.
TRIM := -trimpath
BENCHTIME ?= 2s

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
# With cgo where a C compiler is found, as go build does: host names then
# resolve through the system's resolver (NSS: mDNS, LDAP, ...), not only
# /etc/hosts and DNS. `CGO_ENABLED=0 make build` gives a static binary
# whose every process starts about 1 ms sooner (BENCHMARKS.md, issue 21).
build: ## Build bin/ytrend
	$(GO) build -o $(BIN) ./cmd/ytrend

.PHONY: test
test: ## go vet, then at once: the whole suite under -race (test-race), and at the lowest CPU priority the full-size checks and short fuzz runs (test-checks)
	$(GO) vet $(TRIM) $(PKGS)
	@MAKE="$(MAKE)" ./scripts/test.sh

.PHONY: test-race
test-race: ## The whole suite under -race
	$(GO) test $(TRIM) -race -count=1 -parallel $(TESTPARALLEL) -timeout 30m $(PKGS)

.PHONY: test-checks
test-checks: ## The search walk's full-size checks (and every open's searches alike) without -race, then a short fuzz of search text, raw queries against filters, schedule.yaml, dataset files and serve's search parameters
	$(GO) test $(TRIM) -count=1 -run '^(TestWalk|TestSearchAlikeThroughEveryOpen)' ./store
	$(GO) test $(TRIM) -run '^$$' -fuzz '^FuzzSearchQuery$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./store
	$(GO) test $(TRIM) -run '^$$' -fuzz '^FuzzRawQueryFilters$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./store
	$(GO) test $(TRIM) -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./config
	$(GO) test $(TRIM) -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./dataset
	$(GO) test $(TRIM) -run '^$$' -fuzz '^FuzzSearchParams$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./server

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: lint
lint: ## gofmt check, go vet and staticcheck (pinned, fetched through the module proxy)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

.PHONY: bench
bench: ## Run every benchmark and print tables (quota needs Redis; the first run builds 100k/1M archives, ~15 min)
	@mkdir -p .bench
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./quota ./ingest ./ingest/sim 2>&1 | tee .bench/quota-ingest.txt
	$(GO) test -run '^$$' -bench '^Benchmark(Search|RankingQuality)$$' -benchtime 3x -timeout 120m ./store 2>&1 | tee .bench/store.txt
	$(GO) test -run '^$$' -bench '^BenchmarkSavePage$$' -benchtime 300x -timeout 120m ./store 2>&1 | tee -a .bench/store.txt
	$(GO) test -run '^$$' -bench '^Benchmark(Chart|History)$$' -benchtime 3x -timeout 120m ./store 2>&1 | tee -a .bench/store.txt
	$(GO) test -run '^$$' -bench '^Benchmark(Export|Import)$$' -benchtime 1x -timeout 120m ./store 2>&1 | tee -a .bench/store.txt
	@cat .bench/quota-ingest.txt .bench/store.txt | $(GO) run ./scripts/benchtable

.PHONY: demo
demo: build ## Run the whole job on embedded defaults (simulated YouTube, embedded ledger)
	@BIN=$(BIN) ./scripts/demo.sh

.PHONY: run
run: build ## Run the scheduler for real (needs YOUTUBE_API_KEY; REDIS_URL optional)
	@test -n "$$YOUTUBE_API_KEY" || { echo "set YOUTUBE_API_KEY (and optionally REDIS_URL)"; exit 1; }
	$(BIN) run --listen 127.0.0.1:9108

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin .demo
