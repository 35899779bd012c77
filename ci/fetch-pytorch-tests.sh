#!/usr/bin/env bash
# Fetches PyTorch's test/ folder at the tag of the installed torch, for the upstream suite:
# a shallow, sparse, blob-filtered clone (test/ and the top-level files, version.txt among them),
# about what TorchNeuron's own test infrastructure checks out. Needs network access to GitHub.
#   ci/fetch-pytorch-tests.sh [DIR]      (default DIR: out/pytorch)
#   build/neuron-conform run --suite upstream --pytorch-test-dir DIR --test-files test_view_ops.py
# TORCH_TAG overrides the tag (default: v<installed torch's version without its local part>).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-out/pytorch}
PYTHON=${PYTHON:-.venv/bin/python}
REPO_URL=${PYTORCH_REPO_URL:-https://github.com/pytorch/pytorch.git}
if [ -z "${TORCH_TAG:-}" ]; then
  version=$("$PYTHON" -c 'import torch; print(torch.__version__.split("+")[0])') || {
    echo "fetch-pytorch-tests: cannot import torch with $PYTHON (run make build first, or set PYTHON)" >&2
    exit 2
  }
  TORCH_TAG=v$version
fi
if [ -e "$DIR" ]; then
  echo "fetch-pytorch-tests: $DIR exists; remove it or name another folder" >&2
  exit 2
fi
echo "==> $REPO_URL at $TORCH_TAG into $DIR (test/ only)"
git clone --quiet --depth 1 --filter=blob:none --sparse --branch "$TORCH_TAG" "$REPO_URL" "$DIR"
git -C "$DIR" sparse-checkout set test
echo "==> $(find "$DIR/test" -name 'test_*.py' | wc -l) test files; version.txt says $(cat "$DIR/version.txt")"
echo "run, for example:"
echo "  build/neuron-conform run --suite upstream --pytorch-test-dir $DIR --test-files test_view_ops.py"
