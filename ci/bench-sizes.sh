#!/usr/bin/env bash
# Benchmark of the sizes suite: a full run (every tile check, every model part) with -j 2, then the
# in-worker time per op family and the largest error over its tolerance bound seen.
# Target on a 2-core machine: under 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export DB=${DB:-$(mktemp -d)/bench-sizes.db}
"$(dirname "$0")/bench-suite.sh" sizes 600 - "$@"
python3 - <(build/neuron-conform query --db "$DB") <<'PY'
import json, sys
rows = [(r["case"], r["duration"], r["evidence"]) for r in json.load(open(sys.argv[1]))["results"]]
families, worst = {}, (0.0, "")
for case, seconds, found in rows:
    family = found.get("family", "?")
    count, total = families.get(family, (0, 0.0))
    families[family] = (count + 1, total + (seconds or 0.0))
    ratio = found.get("tolerance_ratio") or 0.0
    if isinstance(ratio, (int, float)) and ratio > worst[0] and found.get("message") is None:
        worst = (ratio, case)
total = sum(seconds for _, seconds in families.values()) or 1.0
print("in-worker time by op family:")
for family, (count, seconds) in sorted(families.items(), key=lambda kv: -kv[1][1]):
    print(f"  {family:<18} {count:5d} cases {seconds:8.1f} s  {100 * seconds / total:5.1f}%")
print(f"largest error over its bound in a passing case: {worst[0]:.3f} ({worst[1]})")
PY
