"""How reliably a late error is charged to the case that queued it: the planted backend's expm1
(harness/tests/planted_backend.py) leaves an error the device raises later, at log1p's next call
(PLANTED_LATE=launch: synchronize never reports it) or at the next synchronize (PLANTED_LATE=sync),
in the middle of a shard of 24 unary ops (none of the planted backend's other faults: sin, cos, tan,
relu, sinh). Each mode runs RUNS times; a run counts as attributed when expm1's case is `error`
naming aten::expm1; every other case must keep the verdict of the run without the plant. Prints
the counts and the time a run takes.

    make bench-late-errors        (RUNS=20 by default)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "build" / "neuron-conform"
TESTS = REPO / "harness" / "tests"
OPS = ("abs|acos|asin|atan|ceil|cosh|deg2rad|erf|erfc|exp|exp2|expm1|floor|frac|log|log10|log1p|log2|neg|"
       "reciprocal|round|rsqrt|sigmoid|sqrt")
EXPM1 = "ops/expm1/float32/forward"


def run(db: Path, mode: str | None, jobs: int = 2) -> tuple[dict[str, str], dict[str, dict], float]:
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("PLANTED_LATE", None)
    if mode:
        env["PLANTED_LATE"] = mode
    start = time.perf_counter()
    subprocess.run([str(CLI), "run", "--ops", f"^({OPS})$", "--dtypes", "float32", "--checks", "forward",
                    "--backend-module", "planted_backend", "--no-skiplists", "--shard", "1/1", "-j", str(jobs),
                    "--db", str(db)], env=env, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    record = json.loads(subprocess.run([str(CLI), "query", "--db", str(db), "--run", "latest"], check=True,
                                       capture_output=True, text=True).stdout)
    return ({r["case"]: r["outcome"] for r in record["results"]}, {r["case"]: r["evidence"] for r in record["results"]},
            seconds)


def main() -> None:
    runs = int(os.environ.get("RUNS", "20"))
    with tempfile.TemporaryDirectory() as scratch:
        reference, _, clean_seconds = run(Path(scratch) / "reference.db", None)
        print(f"reference run without the plant: {len(reference)} cases in {clean_seconds:.1f} s", flush=True)
        failed = False
        # launch: the error surfaces only at a later log1p call, so log1p must run after expm1 in
        # expm1's worker: one worker. sync: at the next wait, wherever: two.
        for mode, jobs in (("launch", 1), ("sync", 2)):
            attributed = others_changed = 0
            seconds = []
            for i in range(runs):
                got, evidence, took = run(Path(scratch) / f"{mode}-{i}.db", mode, jobs)
                seconds.append(took)
                # the planted log1p computes on the host: host_only where it matched
                changed = {case for case in reference if case != EXPM1 and got.get(case) != reference[case]
                           and not (case == "ops/log1p/float32/forward" and got.get(case) == "host_only")}
                others_changed += len(changed)
                if got.get(EXPM1) == "error" and evidence[EXPM1].get("failing_op") == "aten::expm1":
                    attributed += 1
            failed |= attributed != runs or others_changed != 0
            print(f"PLANTED_LATE={mode}, -j {jobs}: attributed to {EXPM1} in {attributed}/{runs} runs; "
                  f"{others_changed} other verdict(s) changed; {sum(seconds) / len(seconds):.1f} s a run "
                  f"(the clean run {clean_seconds:.1f} s)", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
