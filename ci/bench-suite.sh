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
python3 - "$DB" "$start" "$end" "$JOBS" "$MAX_SECONDS" "$MAX_RATIO" <<'PY'
import sqlite3, sys
db, start, end, jobs, max_seconds, max_ratio = sys.argv[1:]
start, end, jobs, max_seconds = float(start), float(end), int(jobs), float(max_seconds)
con = sqlite3.connect(db)
run = con.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
cases, in_worker = con.execute("SELECT COUNT(*), SUM(duration) FROM results WHERE run_id = ?", (run,)).fetchone()
wall = end - start
ratio = wall * jobs / in_worker
print(f"wall time            {wall:8.1f} s   (target < {max_seconds:.0f} s: {'met' if wall < max_seconds else 'MISSED'})")
print(f"cases                {cases:8d}")
print(f"cases per second     {cases / wall:8.2f}")
target = "" if max_ratio == "-" else \
    f"; target <= {max_ratio}: {'met' if ratio <= float(max_ratio) else 'MISSED'}"
print(f"overhead ratio       {ratio:8.3f}   (wall x {jobs} workers / {in_worker:.1f} s in workers{target})")
for route, ops, calls in con.execute(
        "SELECT route, COUNT(DISTINCT op), SUM(calls) FROM op_events WHERE run_id = ? GROUP BY route", (run,)):
    print(f"{route:<8} aten ops   {ops:6d} distinct, {calls} calls")
print("in-worker time by check (share of the total):")
for check, count, seconds in con.execute(
        "SELECT c.check_name, COUNT(*), SUM(r.duration) FROM results r JOIN cases c ON c.id = r.case_id "
        "WHERE r.run_id = ? GROUP BY c.check_name ORDER BY SUM(r.duration) DESC", (run,)):
    print(f"  {check:<14} {count:6d} cases {seconds:8.1f} s  {100 * seconds / in_worker:5.1f}%")
print("outcomes            ", dict(con.execute("SELECT outcome, COUNT(*) FROM results WHERE run_id = ? GROUP BY outcome", (run,))))
PY
