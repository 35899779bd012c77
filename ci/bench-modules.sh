#!/usr/bin/env bash
# Benchmark of the modules suite: a full run (every check, every subject) against the bundled backend
# with -j 2 into a scratch DB, skip lists applied. Prints wall time, cases per second, the
# overhead ratio (wall time x workers / sum of in-worker case times) and the outcomes.
# Target on a 2-core machine: under 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
DB=${DB:-$(mktemp -d)/bench-modules.db}
start=$(date +%s.%N)
build/neuron-conform run --suite modules -j "$JOBS" --db "$DB" --label bench-modules | tee /tmp/bench-modules-summary.txt
end=$(date +%s.%N)
python3 - "$DB" "$start" "$end" "$JOBS" <<'PY'
import sqlite3, sys
db, start, end, jobs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
con = sqlite3.connect(db)
run = con.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
cases, in_worker = con.execute("SELECT COUNT(*), SUM(duration) FROM results WHERE run_id = ?", (run,)).fetchone()
wall = end - start
print(f"wall time            {wall:8.1f} s   (target < 600 s)")
print(f"cases                {cases:8d}")
print(f"cases per second     {cases / wall:8.2f}")
print(f"overhead ratio       {wall * jobs / in_worker:8.3f}   (wall x {jobs} workers / {in_worker:.1f} s in workers)")
by_outcome = dict(con.execute("SELECT outcome, COUNT(*) FROM results WHERE run_id = ? GROUP BY outcome", (run,)))
print("outcomes            ", by_outcome)
PY
