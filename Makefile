# cudaenv: `make install` builds and installs the binaries; `make test` runs
# the whole suite (real bash, zsh, fish, Lmod, Environment Modules and a C
# compiler are used when installed; .ci/run installs them).
GO ?= go

.PHONY: install build test bench-hook bench-install bench-shim bench-cli bench-modules bench-bundle bench-image bench-pypi bench-resolve

# urfave_cli_no_docs leaves out urfave/cli's man page and markdown
# writers, which cudaenv does not use, and the markdown parser whose
# package init every start of cudaenv paid for.
TAGS ?= urfave_cli_no_docs

# cudaenv-shim is the small binary the shims, the prompt hook and the shell
# function's read-only commands run; cudaenv falls back to doing all that
# itself when it is missing.
#
# cudaenv-fastshim (shims/fastshim, in C) is the shims' fast path on Linux:
# a Go program costs about 1 ms more to start than a C one, more than the
# rest of a shim call. It is built where a C compiler is present, and
# cudaenv rehash then points the shims at it; it hands every call it does
# not handle to cudaenv-shim. It is written to a temporary name and renamed,
# as go install does, so a shim running at the time is not disturbed; it
# is built after cudaenv-shim, since one older than its cudaenv-shim hands
# every call on. A failed build is not an error and keeps the old binary
# (the shims point at it): older than a rebuilt cudaenv-shim, it hands
# every call on; beside an unchanged one, it decides as that one does.
# It is linked statically where the C library allows (libc.a): no dynamic
# loader to start makes a shim call 0.2 ms shorter.
FASTSHIM = shims/fastshim/fastshim.c
FASTSHIM_CFLAGS ?= -O2
OUT ?= bin/cudaenv-fastshim

# bindir is where go install puts binaries: GOBIN, else the first GOPATH
# entry's bin. `make -s bindir` prints it (the README runs cudaenv from it).
BINDIR = $$(d="$$($(GO) env GOBIN)"; [ -n "$$d" ] || d="$$($(GO) env GOPATH | cut -d: -f1)/bin"; echo "$$d")

# install ends by saying where the binaries are and, when that folder is
# not on PATH (a fresh account: go install's folder seldom is), the line
# to add to the shell's startup file, above cudaenv's init line, which
# otherwise fails with "cudaenv: command not found".
install:
	$(GO) install -tags '$(TAGS)' ./cmd/cudaenv ./cmd/cudaenv-shim
	@$(MAKE) --no-print-directory fastshim OUT="$(BINDIR)/cudaenv-fastshim"
	@d="$(BINDIR)"; echo "installed cudaenv and cudaenv-shim in $$d"; \
	case ":$$PATH:" in *":$$d:"*) ;; *) \
	  echo "$$d is not on your PATH; add this line to ~/.bashrc or ~/.zshrc, above cudaenv's init line:"; \
	  printf '  export PATH="%s:$$PATH"\n' "$$d"; \
	  echo "(fish, in ~/.config/fish/config.fish: fish_add_path $$d)";; \
	esac

.PHONY: bindir
bindir:
	@echo "$(BINDIR)"

build:
	$(GO) build -tags '$(TAGS)' -o bin/ ./cmd/cudaenv ./cmd/cudaenv-shim
	@$(MAKE) --no-print-directory fastshim OUT=bin/cudaenv-fastshim

.PHONY: fastshim
fastshim:
	@if [ "$$(uname -s)" != Linux ]; then \
	  echo "cudaenv-fastshim is for Linux; the shims run cudaenv-shim"; \
	elif ! command -v $(CC) >/dev/null 2>&1; then \
	  echo "note: no C compiler ($(CC)), so no cudaenv-fastshim: the shims run cudaenv-shim, about 1 ms slower a call"; \
	elif out=$$($(CC) $(FASTSHIM_CFLAGS) -static -o "$(OUT).tmp" $(FASTSHIM) 2>&1 || \
	    $(CC) $(FASTSHIM_CFLAGS) -o "$(OUT).tmp" $(FASTSHIM) 2>&1) && mv -f "$(OUT).tmp" "$(OUT)"; then \
	  echo "built $(OUT)"; \
	else \
	  [ -z "$$out" ] || printf '%s\n' "$$out" | head -n 5; \
	  echo "note: $(CC) could not build cudaenv-fastshim; the shims run cudaenv-shim, or the cudaenv-fastshim built before"; \
	  rm -f "$(OUT).tmp"; \
	fi

# test ends with a short fuzz of each extractor beyond its seed corpus
# (which go test runs): nothing outside the install tree may change, and
# internal/inflate must agree with compress/flate on every input.
# scripts/fuzz.sh runs each for 10 s (and once more on Go's
# "context deadline exceeded" with no failing input).
#
# -count=1: many tests use tools outside the module (bash, zsh, fish, cc,
# Lmod, tclsh, the go command) and skip without them; Go's test cache
# does not look outside the module, so after `apt-get install zsh` it
# would replay the results of the run without zsh.
# -timeout: Go's default of 10 minutes a package is too short on a cold,
# busy 2-core machine, where TestCrossBuilds (cmd/cudaenv-shim) builds
# the standard library for windows/amd64 and linux/arm64 from nothing;
# 60 minutes a package fits in CI's 90 for the whole run.
TESTFLAGS ?= -count=1 -timeout 60m
test:
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...
	GO='$(GO)' bash scripts/fuzz.sh '^FuzzExtractArchive$$' ./fetch
	GO='$(GO)' bash scripts/fuzz.sh '^FuzzExtractWheel$$' ./fetch/pypi
	GO='$(GO)' bash scripts/fuzz.sh FuzzDecode ./internal/xz
	GO='$(GO)' bash scripts/fuzz.sh '^FuzzInflate$$' ./internal/inflate

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

bench-image:
	bash bench/image/run.sh

bench-cli:
	bash bench/cli/run.sh

# bench-doctor: doctor's wall and CPU time here (BEFORE=FILE: an older
# cudaenv in the same rounds).
.PHONY: bench-doctor
bench-doctor:
	bash bench/doctor/run.sh

# bench-pypi needs the network once, to fetch the wheels and uv.
bench-pypi:
	bash bench/pypi/run.sh

# bench-resolve needs the network: it measures against pypi.org.
bench-resolve:
	bash bench/resolve/run.sh

# bench-verify: the fast check as users run it, `cudaenv verify VERSION` of
# a 1500-file toolkit and `list` with 10 of them, against same-run
# baselines (see bench/verify/run.sh).
.PHONY: bench-verify
bench-verify:
	bash bench/verify/run.sh
