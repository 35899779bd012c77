#!/usr/bin/env bash
# Benchmark of the hf suite: every causal-LM architecture of the installed transformers, forward
# check, float32, -j 2, into a scratch DB. Prints each architecture's time (build, move, CPU
# reference and device run, compilation included), the total, and the outcome counts.
# Target on a 2-core machine: under 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
DB=${DB:-$(mktemp -d)/bench-hf.db}
start=$(date +%s.%N)
build/neuron-conform run --suite hf --checks forward --dtypes float32 -j "$JOBS" --db "$DB" --label bench-hf \
  | tee /tmp/bench-hf-summary.txt
end=$(date +%s.%N)
python3 - "$DB" "$start" "$end" <<'PY'
import json, sqlite3, sys
db, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
con = sqlite3.connect(db)
run = con.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
rows = con.execute("SELECT c.subject, r.outcome, r.duration, r.evidence FROM results r JOIN cases c ON c.id = r.case_id "
                   "WHERE r.run_id = ? ORDER BY r.duration DESC", (run,)).fetchall()
print(f"{'architecture':<44} {'outcome':<9} {'seconds':>8} {'peak MiB':>9}")
for subject, outcome, seconds, evidence in rows:
    peak = json.loads(evidence).get("peak_device_memory")
    print(f"{subject:<44} {outcome:<9} {seconds:8.2f} {peak / 2**20 if peak else 0:9.2f}")
total = sum(r[2] for r in rows)
print(f"architectures {len(rows)}, wall time {end - start:.1f} s (target < 900 s), {total:.1f} s inside the workers")
PY
