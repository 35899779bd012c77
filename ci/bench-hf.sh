#!/usr/bin/env bash
# Benchmark of the hf suite: every causal-LM architecture of the installed transformers, forward
# check, float32, -j 2, into a scratch DB. Prints each architecture's time (build, move, CPU
# reference and device run, compilation included) and peak device memory from the run's
# coverage.json, then the total. Target on a 2-core machine: under 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
DB=${DB:-$(mktemp -d)/bench-hf.db}
start=$(date +%s.%N)
build/neuron-conform run --suite hf --checks forward --dtypes float32 -j "$JOBS" --db "$DB" --label bench-hf
end=$(date +%s.%N)
python3 - "$(dirname "$DB")/latest/coverage.json" "$start" "$end" <<'PY'
import json, sys
coverage, start, end = json.load(open(sys.argv[1])), float(sys.argv[2]), float(sys.argv[3])
rows = sorted(coverage["hf"]["architectures"], key=lambda a: -a["seconds"])
print(f"{'architecture':<44} {'status':<22} {'seconds':>8} {'peak MiB':>9}")
for a in rows:
    peak = (a["peak_device_memory"] or 0) / 2**20
    print(f"{a['architecture']:<44} {a['status']:<22} {a['seconds']:8.2f} {peak:9.2f}")
print(f"architectures {len(rows)}, wall time {end - start:.1f} s (target < 900 s), "
      f"{sum(a['seconds'] for a in rows):.1f} s inside the workers")
PY
