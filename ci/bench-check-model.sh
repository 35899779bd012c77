#!/usr/bin/env bash
# Benchmark of check-model: a Llama config at its real size (LlamaConfig's defaults: 6.7 B
# parameters) on meta tensors, forward and backward, judged against the DB. Prints the wall time
# and the peak resident memory of the process tree (target: under 10 s).
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-out/results.db}
.venv/bin/python - "$DB" <<'PY'
import resource, subprocess, sys, time
db = sys.argv[1]
command = ["build/neuron-conform", "check-model", "--hf", "llama", "--full-size", "--train", "--db", db]
start = time.perf_counter()
result = subprocess.run(command, capture_output=True, text=True)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(result.stdout.splitlines()[0] if result.stdout else result.stderr)
print(f"check-model --hf llama --full-size --train: {wall:.2f} s (target < 10 s), peak RSS {peak:.0f} MiB, "
      f"exit {result.returncode}")
PY
