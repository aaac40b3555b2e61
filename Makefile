# cudaenv: `make install` builds and installs the binary; `make test` runs
# the whole suite (real bash, zsh and fish are used when installed).
GO ?= go

.PHONY: install build test bench-hook bench-install bench-shim

install:
	$(GO) install ./cmd/cudaenv

build:
	$(GO) build -o bin/cudaenv ./cmd/cudaenv

test:
	$(GO) vet ./...
	$(GO) test ./...

bench-hook:
	bash bench/hook/run.sh

bench-install:
	bash bench/install/run.sh

bench-shim:
	bash bench/shim/run.sh
