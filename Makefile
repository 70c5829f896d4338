# verifymcp: see README.md. `make scan PKG=...` sets everything up and scans;
# `make test` sets everything up and runs the whole test suite.

export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/verifymcp/verifymcp/cmd/verifymcp/cli.Version=$(VERSION)

# The host's CA bundle is what containers must trust to reach the npm
# registry through a TLS-intercepting proxy; it holds public certificates only.
# Set CA_BUNDLE= (empty) to pass none.
CA_BUNDLE ?= $(wildcard /etc/ssl/certs/ca-certificates.crt)
export VERIFYMCP_CA_BUNDLE ?= $(CA_BUNDLE)

PKG ?= npm:@modelcontextprotocol/server-everything@2026.8.31
ARGS ?=
FORMAT ?= table

.PHONY: build setup scan test unit lint bench clean

build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o bin/verifymcp ./cmd/verifymcp

setup:
	./scripts/setup.sh

scan: setup
	./bin/verifymcp scan --format $(FORMAT) $(ARGS) $(PKG)

# The whole suite: unit tests, the Docker integration tests (build tag
# "docker"), which use the real engine, the real npm registry and pinned
# real MCP servers, and the Postgres tests (build tag "postgres"), which use
# the server that setup starts on 127.0.0.1:5432 (override with
# VERIFYMCP_TEST_POSTGRES_DSN).
test: setup
	go vet -tags docker,postgres ./...
	go test -tags docker,postgres -count=1 -timeout 30m ./...

# Unit tests only: no engine, no Postgres, no network; -short leaves out
# the slow scale tests, which make test runs.
unit:
	go test -short -count=1 ./...

# Lint with a pinned golangci-lint (.golangci.yml), built through the Go
# module proxy into GOPATH/bin on first use.
GOLANGCI_LINT_VERSION := 2.15.0
GOLANGCI_LINT := $(shell go env GOPATH)/bin/golangci-lint
lint:
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q 'version $(GOLANGCI_LINT_VERSION) ' || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$(GOLANGCI_LINT_VERSION)
	$(GOLANGCI_LINT) run ./...

# Regenerate docs/reason-codes.md from the rubric files; a test in ./rubric
# fails while the committed file is stale.
.PHONY: docs
docs:
	go test ./rubric -run '^TestReasonCodesDoc$$' -count=1 -update

bench: setup
	./bench/run.sh

clean:
	rm -rf bin
