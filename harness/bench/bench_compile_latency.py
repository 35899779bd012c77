"""What compiling costs a run, and what a warm cache saves: a slice of the ops suite (OPS, CHECKS,
DTYPES below or from the environment), -j 2, against the bundled backend four ways, each with its
own fresh compile cache unless said:

  latency 0          NEURONSIM_COMPILE_LATENCY=0 (the tests' setting): the baseline
  realistic, cold    NEURONSIM_COMPILE_LATENCY=realistic (3 s + 0.2 s an op per executable), empty cache
  realistic, warm    the same again, on the cache the cold run filled
  --warm, then run   `run --warm` on an empty cache, then the run: what the run itself compiled

Prints each one's wall time, executables compiled, compile seconds, and the ratios the issue
targets (warm within 1.2x of latency 0; the run after --warm compiles nothing).

    make bench-compile-latency          (OPS='^(abs|add|...)$' CHECKS=forward DTYPES=float32)
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "build" / "neuron-conform"
OPS = os.environ.get("OPS", "^(abs|add|mul|sin|exp|sigmoid)$")
CHECKS = os.environ.get("CHECKS", "forward")
DTYPES = os.environ.get("DTYPES", "float32")


def run(db: Path, cache: Path, latency: str, *extra: str) -> tuple[float, dict, str]:
    env = {**os.environ, "NEURONSIM_CACHE_DIR": str(cache), "NEURONSIM_COMPILE_LATENCY": latency}
    start = time.perf_counter()
    done = subprocess.run([str(CLI), "run", "--ops", OPS, "--checks", CHECKS, "--dtypes", DTYPES, "-j", "2",
                           "--no-skiplists", "--reruns", "0", "--db", str(db), *extra],
                          env=env, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    line = next((l.strip() for l in done.stdout.splitlines() if l.strip().startswith("compile:")), "")
    if "--warm" in extra:
        return seconds, {}, line
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    return seconds, coverage["headline"]["compile_cache"] or {}, line


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        rows = []

        def measure(name: str, folder: str, cache: str, latency: str, *extra: str) -> float:
            (root / folder).mkdir(exist_ok=True)
            seconds, totals, line = run(root / folder / "results.db", root / cache, latency, *extra)
            rows.append((name, seconds, totals.get("compiles", "-"), totals.get("compile_seconds", 0.0), line))
            print(f"{name:<28} {seconds:8.1f} s  compiled {totals.get('compiles', '-'):>5}  "
                  f"compiling {totals.get('compile_seconds', 0.0):8.1f} s", flush=True)
            return seconds

        print(f"ops suite slice: --ops '{OPS}' --checks {CHECKS} --dtypes {DTYPES} -j 2")
        zero = measure("latency 0", "zero", "cache-zero", "0")
        cold = measure("realistic, cold", "cold", "cache-realistic", "realistic")
        warm = measure("realistic, warm", "warm", "cache-realistic", "realistic")
        measure("--warm (realistic)", "prewarm", "cache-prewarm", "realistic", "--warm")
        after = measure("run after --warm", "after", "cache-prewarm", "realistic")
        print(f"cold / latency 0: {cold / zero:.2f}x; warm / latency 0: {warm / zero:.2f}x (target <= 1.2x); "
              f"run after --warm / latency 0: {after / zero:.2f}x; compiled by the run after --warm: {rows[-1][2]} "
              f"(target 0)")


if __name__ == "__main__":
    main()
