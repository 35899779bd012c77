"""make bench-capture: what the dispatcher capture (harness/worker/dispatch_capture.py) adds to a
case. Runs a slice of the ops suite's cases in this one process, each without and with the capture
(best of --repeat each, alternating, after a warm-up run), and prints the totals, their ratio and
the time added per case and per captured op.

Usage: bench_capture.py [--backend-module MODULE] [--cases N] [--checks forward,backward] [--repeat R]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "worker"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the foreign test backend
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")  # only the backend under test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend-module", default="torch_neuronsim")
    parser.add_argument("--cases", type=int, default=120, help="float32 cases of the ops suite, in listing order")
    parser.add_argument("--checks", default="forward,backward")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import torch

    backend = importlib.import_module(args.backend_module)
    import backend_contract
    import suite_api
    from case_context import Context

    device = torch._C._get_privateuse1_backend_name()
    backend_contract.declare(args.backend_module, backend, device)
    suite = suite_api.load_suite("ops")
    suite.configure({})
    checks = set(args.checks.split(","))
    cases = [c["id"] for c in suite.list_cases() if c["dtype"] == "float32" and c["check"] in checks][:args.cases]
    ctx = Context(backend, device, 0)

    def timed(case: str, capture: bool) -> float:
        ctx.clear_tracking()
        started = time.perf_counter()
        if capture:
            with ctx.capture:
                suite.run_case(case, ctx)
        else:
            suite.run_case(case, ctx)
        return time.perf_counter() - started

    without = with_capture = 0.0
    captured_ops = 0
    for case in cases:
        timed(case, True)  # warm-up: imports, sample generators, the backend's caches
        captured_ops += sum(sum(counts.values()) for counts in ctx.capture.counts.values())
        off, on = [], []
        for _ in range(args.repeat):
            off.append(timed(case, False))
            on.append(timed(case, True))
        without += min(off)
        with_capture += min(on)
    added = with_capture - without
    print(f"backend {args.backend_module} (device {device}), {len(cases)} ops-suite cases ({args.checks}, float32), "
          f"best of {args.repeat}")
    print(f"  without capture {without:.3f} s, with capture {with_capture:.3f} s: ratio {with_capture / without:.3f}")
    print(f"  added {1000 * added / len(cases):.2f} ms per case; {captured_ops / len(cases):.0f} captured ops per case, "
          f"{1e6 * added / max(captured_ops, 1):.1f} us per captured op", flush=True)


if __name__ == "__main__":
    main()
