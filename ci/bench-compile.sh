#!/usr/bin/env bash
# Benchmark of the compile suite: the forward check of every OpInfo at float32 and bfloat16 with
# -j 2 (skip lists applied), twice over one fresh on-disk compile cache: cold (every graph lowered
# by torch-mlir), then warm (lowered graphs loaded from disk). Prints each run's time and cases per
# second, where the cold run's time went (Dynamo, AOTAutograd and the cache, lowering, execution,
# the rest: CPU references and sample inputs), and the lowering time cold against warm.
# Reruns are off: a compile error is deterministic, and without skip-list entries for this suite
# every error would be run three times, each in a fresh worker.
# Targets on a 2-core machine: under 15 minutes; warm lowering at least 2x faster than cold.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=$(mktemp -d)
export NEURONSIM_CACHE_DIR="$SCRATCH/cache"
for pass in cold warm; do
  DB="$SCRATCH/$pass.db" ci/bench-suite.sh compile 900 - --checks forward --dtypes float32,bfloat16 --reruns 0 "$@" \
    | grep -v '^progress' | tail -8
done
python3 - <(build/neuron-conform query --db "$SCRATCH/cold.db") <(build/neuron-conform query --db "$SCRATCH/warm.db") <<'PY'
import json, sys

def sums(run_file):
    total = {"duration": 0.0, "first_call": 0.0, "backend": 0.0, "lowering": 0.0, "execute": 0.0}
    for result in json.load(open(run_file))["results"]:
        duration, e = result["duration"], result["evidence"]
        stats = e.get("backend_compile_stats")
        total["duration"] += duration
        total["first_call"] += e.get("first_call_seconds", 0.0)
        total["backend"] += e.get("compile_seconds", 0.0)
        total["execute"] += e.get("execute_seconds", 0.0)
        total["lowering"] += stats.get("lowering_seconds", 0.0) if isinstance(stats, dict) else 0.0
    return total

cold, warm = sums(sys.argv[1]), sums(sys.argv[2])
t = cold["duration"]
parts = {
    "Dynamo (tracing, guards)": cold["first_call"] - cold["backend"] - cold["execute"],
    "AOTAutograd, cache": cold["backend"] - cold["lowering"],
    "lowering (torch-mlir)": cold["lowering"],
    "execution (2 calls)": 2 * cold["execute"],
    "rest (CPU reference, inputs)": t - cold["first_call"] - cold["execute"],
}
print(f"cold run, {t:.0f} s in workers:")
for name, seconds in parts.items():
    print(f"  {name:<30} {seconds:8.1f} s  {100 * seconds / t:5.1f}%")
ratio = cold["lowering"] / max(warm["lowering"], 1e-9)
print(f"lowering time        cold {cold['lowering']:.1f} s, warm {warm['lowering']:.1f} s: "
      f"{ratio:.0f}x faster warm (target >= 2x: {'met' if ratio >= 2 else 'MISSED'})")
PY
rm -rf "$SCRATCH"
