#!/usr/bin/env bash
# The nightly job: runs of the distributed and compile suites and a full run of the operator
# suite (every check) against the backend, their reports, a dashboard over each one's history, and the release gate against the committed
# baseline. The history accumulates in $DB, so keep that file between nights (a CI cache or
# artifact). Exit code: the gate's (0 pass, 1 regressions, 2 only unacknowledged improvements,
# 3 could not judge); a run that could not complete exits with its own code first.
#
#   ci/nightly.sh                      # torch_neuronsim, out/results.db, -j = cores
#   BACKEND=torch_neuronx JOBS=8 ci/nightly.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DB=${DB:-out/results.db}
JOBS=${JOBS:-$(nproc)}
BACKEND=${BACKEND:-torch_neuronsim}
BASELINE=${BASELINE:-ci/baseline.json}
CLI=build/neuron-conform

make build
mkdir -p "$(dirname "$DB")"

# Not --strict: skip-list drift shows in the report and the gate; the night goes on.
# The distributed suite first (about a minute; its own dashboard), so that the ops run is the
# newest one, which the dashboard and the gate below judge.
"$CLI" run --suite distributed --backend-module "$BACKEND" --db "$DB" --label nightly
"$CLI" dashboard --db "$DB" --suite distributed --out "$(dirname "$DB")/dashboard-distributed"
# torch.compile: the forward check at float32 and bfloat16 (about 6 minutes on 2 cores; the full
# suite takes 80), charting the compile pass rate and total compile time night by night.
"$CLI" run --suite compile --checks forward --dtypes float32,bfloat16 --backend-module "$BACKEND" \
  -j "$JOBS" --db "$DB" --label nightly
"$CLI" dashboard --db "$DB" --suite compile --out "$(dirname "$DB")/dashboard-compile"
# The aten suite (overloads no OpInfo reaches, docs/ledger.md; under a minute), before the ops run.
"$CLI" run --suite aten --backend-module "$BACKEND" -j "$JOBS" --db "$DB" --label nightly
"$CLI" run --suite ops --backend-module "$BACKEND" -j "$JOBS" --db "$DB" --label nightly
"$CLI" dashboard --db "$DB" --out "$(dirname "$DB")/dashboard"
# The aten-overload ledger over the night's runs (the latest of each suite), kept beside the gate.
"$CLI" ledger --db "$DB" --summary | tee "$(dirname "$DB")/ledger.txt"

if [[ ! -f "$BASELINE" ]]; then
  echo "no baseline at $BASELINE: write one with $CLI gate --write-baseline $BASELINE --db $DB" >&2
  exit 3
fi
status=0
"$CLI" gate --baseline "$BASELINE" --db "$DB" | tee "$(dirname "$DB")/gate.md" || status=${PIPESTATUS[0]}
echo "report: $(dirname "$DB")/latest/index.html  dashboard: $(dirname "$DB")/dashboard/index.html"
exit "$status"
