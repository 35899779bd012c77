#!/usr/bin/env bash
# Benchmark of the harness: the full forward sweep of the operator suite (every OpInfo at
# every CPU dtype) against the bundled backend with -j 2, into a scratch DB. Prints wall time,
# cases per second, the overhead ratio (wall time x workers / sum of in-worker case times),
# worker start-up, and the backend's native/fallback split over the sweep.
# Targets on a 2-core machine: under 15 minutes, overhead ratio <= 1.15, start-up < 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
DB=${DB:-$(mktemp -d)/bench-ops.db}
start=$(date +%s.%N)
build/neuron-conform run --suite ops --checks forward -j "$JOBS" --db "$DB" --label bench-ops | tee /tmp/bench-ops-summary.txt
end=$(date +%s.%N)
python3 - "$DB" "$start" "$end" "$JOBS" <<'PY'
import sqlite3, sys
db, start, end, jobs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
con = sqlite3.connect(db)
run = con.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
cases, in_worker = con.execute("SELECT COUNT(*), SUM(duration) FROM results WHERE run_id = ?", (run,)).fetchone()
wall = end - start
print(f"wall time            {wall:8.1f} s   (target < 900 s)")
print(f"cases                {cases:8d}")
print(f"cases per second     {cases / wall:8.2f}")
print(f"overhead ratio       {wall * jobs / in_worker:8.3f}   (wall x {jobs} workers / {in_worker:.1f} s in workers; target <= 1.15)")
for route, ops, calls in con.execute(
        "SELECT route, COUNT(DISTINCT op), SUM(calls) FROM op_events WHERE run_id = ? GROUP BY route", (run,)):
    print(f"{route:<8} aten ops   {ops:6d} distinct, {calls} calls")
by_outcome = dict(con.execute("SELECT outcome, COUNT(*) FROM results WHERE run_id = ? GROUP BY outcome", (run,)))
print("outcomes            ", by_outcome)
PY
