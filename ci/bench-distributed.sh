#!/usr/bin/env bash
# Benchmark of the distributed suite: a full run at world size 2 (every case) with -j 2, then the
# share of the workers' time spent starting worlds (a world starts once per worker and again
# after a case that did not pass; world_start_seconds in the evidence).
# Target on a 2-core machine: under 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export DB=${DB:-$(mktemp -d)/bench-distributed.db}
ci/bench-suite.sh distributed 300 - "$@"
python3 - <(build/neuron-conform query --db "$DB") <<'PY'
import json, sys
rows = [(r["duration"], r["evidence"]) for r in json.load(open(sys.argv[1]))["results"]]
in_worker = sum(d for d, _ in rows)
starts = [e.get("world_start_seconds") for _, e in rows]
starts = [s for s in starts if s is not None]
print(f"worlds started       {len(starts):8d}   ({sum(starts) / max(len(starts), 1):.2f} s each on average)")
print(f"starting worlds      {sum(starts):8.1f} s   ({100 * sum(starts) / in_worker:.0f}% of {in_worker:.1f} s in workers)")
PY
