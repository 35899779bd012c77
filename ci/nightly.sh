#!/usr/bin/env bash
# The nightly job: a run of every suite against the backend, labelled with one night id so the
# runs belong together; a dashboard over each suite's history; the aten-overload ledger; and one
# release gate over every suite the committed baseline holds. The history accumulates in $DB, so
# keep that file between nights (a CI cache or artifact). Exit code: the gate's (0 pass,
# 1 regressions or a suite without a run, 2 only unacknowledged improvements, 3 could not
# judge), or 4 when a step before the gate failed (a run that could not complete: bad input, a
# full disk; the API table, the dashboard or the ledger), naming the step.
#
#   ci/nightly.sh                                   # every suite, torch_neuronsim, out/results.db
#   SUITES="ops hf" ci/nightly.sh                   # a selection of the nightly's suites
# The suites, and the options each runs with, are what the suites declare (`neuron-conform suites
# --nightly`: a suite's `nightly` in its suite.py); upstream is added given a checkout.
#   BACKEND=torch_neuronx JOBS=8 PYTORCH_TEST_DIR=~/pytorch/test ci/nightly.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DB=${DB:-out/results.db}
JOBS=${JOBS:-$(nproc)}
BACKEND=${BACKEND:-torch_neuronsim}
BASELINE=${BASELINE:-ci/baseline.json}
NIGHT=${NIGHT:-night-$(date -u +%Y%m%d-%H%M)}
SUITES=${SUITES:-}
CLI=build/neuron-conform
OUT=$(dirname "$DB")

trap 'echo "nightly: failed at line $LINENO: $BASH_COMMAND" >&2; exit 4' ERR
make build
mkdir -p "$OUT"

# One suite a line: "<suite> <shards> [--suite-option NAME=VALUE ...]", the biggest last, so that
# `latest` (the report link, the ledger's newest run) is the biggest one. upstream needs a
# checkout of PyTorch's test/ (ci/fetch-pytorch-tests.sh): first, and only with one.
nightly=$("$CLI" suites --nightly --backend-module "$BACKEND")
if [[ -n "${PYTORCH_TEST_DIR:-}" ]]; then
  nightly="upstream 1 --pytorch-test-dir $PYTORCH_TEST_DIR"$'\n'"$nightly"
fi
for wanted in $SUITES; do
  if ! grep -q "^$wanted " <<<"$nightly"; then
    echo "nightly: SUITES names '$wanted', which the nightly does not run (neuron-conform suites --nightly;" \
      "upstream needs PYTORCH_TEST_DIR)" >&2
    exit 4
  fi
done

# Not --strict: skip-list drift shows in the reports and the gate; the night goes on.
started=$SECONDS
while read -r suite _shards args <&3; do
  if [[ -n "$SUITES" && " $SUITES " != *" $suite "* ]]; then continue; fi
  echo "==> $NIGHT: suite $suite"
  t0=$SECONDS
  # shellcheck disable=SC2086
  "$CLI" run --suite "$suite" $args --backend-module "$BACKEND" -j "$JOBS" --db "$DB" --label "$NIGHT"
  echo "$suite $((SECONDS - t0))" >>"$OUT/$NIGHT.seconds"
done 3<<<"$nightly"
echo "==> $NIGHT: every suite in $((SECONDS - started)) s (per suite: $OUT/$NIGHT.seconds)"
# The API compatibility table first, so the dashboard links it.
"$CLI" api-compat --db "$DB"
"$CLI" dashboard --db "$DB" --out "$OUT/dashboard"
# The aten-overload ledger over the night's runs (the latest of each suite), kept beside the gate.
"$CLI" ledger --db "$DB" --summary | tee "$OUT/ledger.txt"

if [[ ! -f "$BASELINE" ]]; then
  echo "no baseline at $BASELINE: write one with $CLI gate --write-baseline $BASELINE --db $DB" >&2
  exit 3
fi
status=0
"$CLI" gate --baseline "$BASELINE" --db "$DB" | tee "$OUT/gate.md" || status=${PIPESTATUS[0]}
echo "report: $OUT/latest/index.html  dashboard (every suite): $OUT/dashboard/index.html  gate: $OUT/gate.md"
exit "$status"
