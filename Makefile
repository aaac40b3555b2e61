# cudaenv: `make install` builds and installs the binary; `make test` runs
# the whole suite (real bash, zsh and fish are used when installed).
GO ?= go

.PHONY: install build test bench-hook bench-install bench-shim bench-modules bench-bundle

# cudaenv-shim is the small binary the shims run; cudaenv falls back to
# being its own shim when it is missing.
install:
	$(GO) install ./cmd/cudaenv ./cmd/cudaenv-shim

build:
	$(GO) build -o bin/ ./cmd/cudaenv ./cmd/cudaenv-shim

# test ends with a short fuzz of each extractor beyond its seed corpus
# (which go test runs): nothing outside the install tree may change.
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -run '^$$' -fuzz '^FuzzExtractArchive$$' -fuzztime 10s ./fetch
	$(GO) test -run '^$$' -fuzz '^FuzzExtractWheel$$' -fuzztime 10s ./fetch/pypi
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 10s ./internal/xz

bench-hook:
	bash bench/hook/run.sh

bench-install:
	bash bench/install/run.sh

bench-shim:
	bash bench/shim/run.sh

bench-modules:
	bash bench/modules/run.sh

bench-bundle:
	bash bench/bundle/run.sh
