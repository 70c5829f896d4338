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

.PHONY: build web setup scan test unit lint cross helpers dist image bench clean

build: web
	go build -trimpath -ldflags '$(LDFLAGS)' -o bin/verifymcp ./cmd/verifymcp

# The config scan's browser page (package web): index.html, its script and
# stylesheet, Go's wasm_exec.js and the config scan compiled to
# WebAssembly, in bin/web, which file://, any static host or
# `bin/verifymcp config serve` serves.
web:
	go run ./web/buildweb -o bin/web -version $(VERSION)

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
lint: cross
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q 'version $(GOLANGCI_LINT_VERSION) ' || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$(GOLANGCI_LINT_VERSION)
	$(GOLANGCI_LINT) run ./...

# The release platforms. cross builds every package for each (and vets the
# tests, all tags, for macOS, which CI has no machine of), without linking
# or writing a binary: a Linux-only import in a host-side package fails here,
# as does an import that keeps the browser page's module from compiling.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "go build ./... for $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} go build ./...; \
	done
	GOOS=darwin GOARCH=arm64 go vet -tags docker,postgres ./...
	@echo "go vet for js/wasm: the browser page's module, and report and clientconfig under it"
	GOOS=js GOARCH=wasm go vet ./web/wasm ./web/configscan

# Release archives, one per platform, and their SHA-256 sums in dist/ (what
# goreleaser makes from .goreleaser.yaml; see docs/install.md). The helper
# containers of a scan run a static Linux build for the engine's
# architecture, whatever the host is (sandbox/helper.go): helpers builds
# those into sandbox/embedded/, gzip-compressed, and each release binary
# embeds the ones it is not itself (build tag embedhelpers). Builds are
# reproducible: -trimpath, no build ID, archive entries dated by the last
# commit.
DIST_VERSION = $(patsubst v%,%,$(VERSION))
RELEASE_FLAGS = -trimpath -ldflags '-s -w -buildid= $(LDFLAGS)'
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
helpers:
	@mkdir -p sandbox/embedded
	@set -e; for arch in amd64 arm64; do \
		echo "helper linux/$$arch"; \
		GOOS=linux GOARCH=$$arch go build $(RELEASE_FLAGS) -o sandbox/embedded/verifymcp-linux-$$arch ./cmd/verifymcp; \
		gzip -9 -n -f sandbox/embedded/verifymcp-linux-$$arch; \
	done

dist: helpers
	rm -rf dist && mkdir -p dist
	go run ./web/buildweb -o dist/web -version $(VERSION)
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; name=verifymcp_$(DIST_VERSION)_$${os}_$${arch}; \
		echo "dist/$$name.tar.gz"; mkdir -p dist/$$name/docs; \
		GOOS=$$os GOARCH=$$arch go build $(RELEASE_FLAGS) -tags embedhelpers -o dist/$$name/verifymcp ./cmd/verifymcp; \
		cp README.md dist/$$name/; cp docs/install.md dist/$$name/docs/; \
		cp -R dist/web dist/$$name/web; \
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) \
			-C dist -cf - $$name | gzip -9 -n > dist/$$name.tar.gz; \
		rm -rf dist/$$name; \
	done
	rm -rf dist/web
	cd dist && sha256sum *.tar.gz > verifymcp_$(DIST_VERSION)_checksums.txt
	@ls -l dist

# A container image of verifymcp itself (Dockerfile, target prebuilt): a
# static Linux build for this engine's architecture, which is its own
# helper, and a CA bundle, on scratch; no image registry is needed. It
# scans through a mounted engine socket, which gives it root on the host:
# see docs/install.md before you run it.
IMAGE ?= verifymcp:$(DIST_VERSION)
IMAGE_ARCH ?= $(shell docker version --format '{{.Server.Arch}}' 2>/dev/null || go env GOARCH)
IMAGE_CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
image:
	rm -rf dist/image && mkdir -p dist/image/rootfs/tmp dist/image/rootfs/etc/ssl/certs dist/image/data
	chmod 1777 dist/image/rootfs/tmp
	GOOS=linux GOARCH=$(IMAGE_ARCH) go build $(RELEASE_FLAGS) -o dist/image/rootfs/verifymcp ./cmd/verifymcp
	cp $(IMAGE_CA_BUNDLE) dist/image/rootfs/etc/ssl/certs/ca-certificates.crt
	docker build --target prebuilt --build-arg VERSION=$(VERSION) -t $(IMAGE) -f Dockerfile dist/image

# Regenerate docs/reason-codes.md from the rubric files; a test in ./rubric
# fails while the committed file is stale.
.PHONY: docs
docs:
	go test ./rubric -run '^TestReasonCodesDoc$$' -count=1 -update

bench: setup
	./bench/run.sh

clean:
	rm -rf bin dist sandbox/embedded
