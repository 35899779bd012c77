"""Shared compile-cache benchmark: N processes compiling the same keys into one directory.

Each process compiles the same `--keys` eager signatures (ones and add on tensors of distinct
lengths, two or three executables each) into
one NEURONSIM_CACHE_DIR, all at once, with an emulated compile latency per executable. Prints the
compiles performed per entry on disk (about 1 when claims work, N without), the claims waited
for, the entries on disk and how many of them fail to parse. Then a second round: one process is
killed with SIGKILL in the middle of its compiles, and the rest compile the same keys into the
same directory: again the compiles, the claims broken, and the corrupt entries (must be 0).
Exit status 0 even when a target is missed: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = """
import json, sys, torch, torch_neuronsim as ns
first, count = int(sys.argv[1]), int(sys.argv[2])
for n in range(first, first + count):
    torch.ones(n, device="neuron").add(1)
torch.neuron.synchronize()
print(json.dumps(ns.compile_cache_stats()))
"""

def spawn(code: str, directory: Path, latency: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURONSIM_")}
    env.update(NEURONSIM_CACHE_DIR=str(directory), NEURONSIM_COMPILE_LATENCY=latency)
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(procs: list[subprocess.Popen[str]]) -> list[dict[str, float]]:
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"a compiling process failed:\n{err[-2000:]}")
        stats.append(json.loads(out.strip().splitlines()[-1]))
    return stats


def corrupt(directory: Path) -> int:
    """Entries whose checksum line does not match their body (what the engine's parser rejects)."""
    bad = 0
    for path in directory.rglob("*.neff"):
        text = path.read_text(errors="replace")
        body, _, checksum = text.rpartition("checksum ")
        if not text.startswith("NEURONSIM-NEFF ") or hashlib.sha1(body.encode()).hexdigest() != checksum.strip():
            bad += 1
    return bad


def report(title: str, keys: int, stats: list[dict[str, float]], directory: Path, seconds: float) -> None:
    compiles = sum(int(s["compiles"]) for s in stats)
    entries = len(list(directory.rglob("*.neff")))
    print(f"{title}: {len(stats)} processes x {keys} keys in {seconds:.1f} s: {compiles} compiles for "
          f"{entries} entries ({compiles / max(entries, 1):.2f} per entry; {len(stats)}.00 without claims), {sum(int(s['claims_waited']) for s in stats)} claims waited, "
          f"{sum(int(s['claims_broken']) for s in stats)} broken, {entries} entries, "
          f"{corrupt(directory)} corrupt, {len(list(directory.rglob('*.claim')))} claims left")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--latency", default="0.002", help="NEURONSIM_COMPILE_LATENCY per key (default 0.002 s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="neuronsim-bench-cache-") as root:
        shared = Path(root) / "shared"
        started = time.perf_counter()
        stats = finish([spawn(WORKER, shared, args.latency, "1", str(args.keys)) for _ in range(args.processes)])
        report("same keys at once", args.keys, stats, shared, time.perf_counter() - started)

        killed = Path(root) / "killed"
        victim = spawn(WORKER, killed, args.latency, "1", str(args.keys))
        deadline = time.monotonic() + 120
        while len(list(killed.rglob("*.neff"))) < args.keys // 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        left = len(list(killed.rglob("*.neff")))
        started = time.perf_counter()
        stats = finish([spawn(WORKER, killed, args.latency, "1", str(args.keys)) for _ in range(args.processes - 1)])
        print(f"killed with SIGKILL after {left} entries")
        report("after a kill -9 mid-compile", args.keys, stats, killed, time.perf_counter() - started)


if __name__ == "__main__":
    main()
