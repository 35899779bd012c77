#!/usr/bin/env bash
# Benchmark of the whole nightly (ci/nightly.sh: every suite, its dashboards, the ledger, the
# gate) against the bundled backend on a scratch DB, -j 2 (JOBS). Prints per suite its wall
# time, cases and cases per second, then the total against the target (45 minutes on 2 cores).
# The gate's verdict does not fail the benchmark (a scratch DB has no history); a run that
# cannot complete does.
set -euo pipefail
cd "$(dirname "$0")/.."
export JOBS=${JOBS:-2}
export DB=${DB:-$(mktemp -d)/bench-nightly.db}
export NIGHT=${NIGHT:-bench-nightly}
MAX_SECONDS=${MAX_SECONDS:-2700}
start=$(date +%s.%N)
verdict=0
ci/nightly.sh || verdict=$?
if [ "$verdict" -gt 2 ]; then  # 3: the gate could not judge; 4: a step before it failed
  echo "bench-nightly: ci/nightly.sh exited $verdict: the night did not complete" >&2
  exit "$verdict"
fi
end=$(date +%s.%N)
python3 - <(build/neuron-conform query --db "$DB" --runs) "$(dirname "$DB")/$NIGHT.seconds" "$start" "$end" "$MAX_SECONDS" "$NIGHT" "$verdict" <<'PY'
import json, sys
runs_file, seconds_file, start, end, max_seconds, night, verdict = sys.argv[1:]
wall, max_seconds = float(end) - float(start), float(max_seconds)
seconds = dict(line.split() for line in open(seconds_file))
runs = json.load(open(runs_file))
print(f"\n{'suite':<12} {'wall s':>8} {'cases':>8} {'cases/s':>8}")
for suite, s in seconds.items():
    cases = sum(r["recorded"] for r in runs if r["suite"] == suite and r["label"] == night)
    print(f"{suite:<12} {float(s):8.0f} {cases:8d} {cases / max(float(s), 1e-9):8.2f}")
print(f"{'total':<12} {wall:8.0f}   (target < {max_seconds:.0f} s: {'met' if wall < max_seconds else 'MISSED'})")
print(f"gate: exit {verdict} ({['PASS', 'FAIL: regressions', 'FAIL: only unacknowledged improvements'][int(verdict)]}; not the benchmark's verdict)")
PY
