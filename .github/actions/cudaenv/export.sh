#!/usr/bin/env bash
# Step "Export the selection to later steps" of action.yml: append what
# the selection sets (CUDA_HOME, CUDA_PATH, CUDACXX, the cuDNN paths) to
# $GITHUB_ENV and its bin folders to $GITHUB_PATH.
set -euo pipefail
exec "${CUDAENV_BIN:-cudaenv}" env --github
