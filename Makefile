# cudaenv: `make install` builds and installs the binary; `make test` runs
# the whole suite (real bash, zsh and fish are used when installed).
GO ?= go

.PHONY: install build test bench-hook bench-install bench-shim bench-cli bench-modules bench-bundle

# urfave_cli_no_docs leaves out urfave/cli's man page and markdown
# writers, which cudaenv does not use, and the markdown parser whose
# package init every start of cudaenv paid for.
TAGS ?= urfave_cli_no_docs

# cudaenv-shim is the small binary the shims, the prompt hook and the shell
# function's read-only commands run; cudaenv falls back to doing all that
# itself when it is missing.
install:
	$(GO) install -tags '$(TAGS)' ./cmd/cudaenv ./cmd/cudaenv-shim

build:
	$(GO) build -tags '$(TAGS)' -o bin/ ./cmd/cudaenv ./cmd/cudaenv-shim

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

bench-cli:
	bash bench/cli/run.sh
