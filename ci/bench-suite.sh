#!/usr/bin/env bash
# Benchmark of one suite: a full run against the bundled backend with -j 2 (JOBS), into a
# scratch DB (DB), skip lists applied. Prints wall time, cases per second, the overhead ratio
# (wall time x workers / sum of in-worker case times), the backend's native/fallback split and
# the outcomes, each against its target.
#   ci/bench-suite.sh SUITE MAX_SECONDS MAX_OVERHEAD_RATIO|- [more run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=$1 MAX_SECONDS=$2 MAX_RATIO=$3
shift 3
JOBS=${JOBS:-2}
DB=${DB:-$(mktemp -d)/bench-$SUITE.db}
start=$(date +%s.%N)
build/neuron-conform run --suite "$SUITE" -j "$JOBS" --db "$DB" --label "bench-$SUITE" "$@" \
  | tee "/tmp/bench-$SUITE-summary.txt"
end=$(date +%s.%N)
python3 - <(build/neuron-conform query --db "$DB") "$start" "$end" "$JOBS" "$MAX_SECONDS" "$MAX_RATIO" <<'PY'
import json, sys
run_file, start, end, jobs, max_seconds, max_ratio = sys.argv[1:]
start, end, jobs, max_seconds = float(start), float(end), int(jobs), float(max_seconds)
run = json.load(open(run_file))
results = run["results"]
cases, in_worker = len(results), sum(r["duration"] for r in results)
wall = end - start
ratio = wall * jobs / in_worker
print(f"wall time            {wall:8.1f} s   (target < {max_seconds:.0f} s: {'met' if wall < max_seconds else 'MISSED'})")
print(f"cases                {cases:8d}")
print(f"cases per second     {cases / wall:8.2f}")
target = "" if max_ratio == "-" else \
    f"; target <= {max_ratio}: {'met' if ratio <= float(max_ratio) else 'MISSED'}"
print(f"overhead ratio       {ratio:8.3f}   (wall x {jobs} workers / {in_worker:.1f} s in workers{target})")
for route in ("native", "fallback"):
    calls = {}
    for r in results:
        for op, n in r[f"{route}_ops"].items():
            calls[op] = calls.get(op, 0) + n
    if calls:
        print(f"{route:<8} aten ops   {len(calls):6d} distinct, {sum(calls.values())} calls")
by_check = {}
for r in results:  # a case id ends in its check (suite/subject/dtype/check)
    count, seconds = by_check.get(r["case"].rsplit("/", 1)[1], (0, 0.0))
    by_check[r["case"].rsplit("/", 1)[1]] = (count + 1, seconds + r["duration"])
print("in-worker time by check (share of the total):")
for check, (count, seconds) in sorted(by_check.items(), key=lambda kv: -kv[1][1]):
    print(f"  {check:<14} {count:6d} cases {seconds:8.1f} s  {100 * seconds / in_worker:5.1f}%")
print("outcomes            ", run["outcomes"])
PY
