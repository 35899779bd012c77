"""A world of ranks for the distributed suite: one process per rank (rank.py), a fresh process
group per world, the store a TCPStore this process serves on a port the kernel picks (so no
port is ever contended). Starting a world costs seconds (each rank imports torch and the
backend), so the suite keeps one across cases and replaces it after anything went wrong.

Ranks die with this process (PR_SET_PDEATHSIG, set between fork and exec): when the harness
kills a worker for a timeout, or is killed itself, no rank outlives it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pickle
import signal
import subprocess
import sys
import time
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

RANK_SCRIPT = Path(__file__).resolve().parent / "rank.py"
PR_SET_PDEATHSIG = 1
# After one rank raised, how long the others may take to answer before they count as stuck
# (waiting in a collective the failed rank never joined).
STUCK_AFTER_SECONDS = 10.0


class RankDied(Exception):
    """A rank's process ended while the world was running."""

    def __init__(self, rank: int, returncode: int, during: str) -> None:
        how = f"signal {-returncode} ({signal.Signals(-returncode).name})" if returncode < 0 else f"exit code {returncode}"
        super().__init__(f"rank {rank} died with {how} {during}")
        self.rank, self.returncode = rank, returncode


class WorldFailed(Exception):
    """The world could not start (a rank could not join the process group)."""


def _die_with_parent(parent: int) -> None:
    """In the forked child, before exec: SIGKILL when the parent dies (and it may already have)."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(127)


class World:
    def __init__(self, backend_module: str, device_type: str, size: int) -> None:
        import torch.distributed as dist

        self.size = size
        started = time.perf_counter()
        self.store = dist.TCPStore("127.0.0.1", 0, size, is_master=True, wait_for_workers=False)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.processes: list[subprocess.Popen] = []
        self.requests: list[Connection] = []
        self.replies: list[Connection] = []
        parent = os.getpid()
        atexit.register(self.kill)
        for rank in range(size):
            child_requests, to_rank = os.pipe()
            from_rank, child_replies = os.pipe()
            command = [sys.executable, str(RANK_SCRIPT), "--backend-module", backend_module,
                       "--device-type", device_type, "--rank", str(rank), "--world-size", str(size),
                       "--store-port", str(self.store.port), "--requests-fd", str(child_requests),
                       "--replies-fd", str(child_replies)]
            # stdout too goes to this worker's stderr: the worker's stdout is the harness's protocol.
            self.processes.append(subprocess.Popen(
                command, env=env, pass_fds=(child_requests, child_replies), stdin=subprocess.DEVNULL,
                stdout=sys.stderr.fileno(), preexec_fn=lambda: _die_with_parent(parent)))
            os.close(child_requests)
            os.close(child_replies)
            self.requests.append(Connection(to_rank, readable=False))
            self.replies.append(Connection(from_rank, writable=False))
        for rank, reply in enumerate(self._gather("while the world started")):
            if "fatal" in reply:
                self.kill()
                raise WorldFailed(reply["fatal"])
        self.start_seconds = time.perf_counter() - started

    def _gather(self, during: str, stuck_after: float | None = None) -> list[dict[str, Any]]:
        """One reply from every rank. A rank whose pipe closes died: RankDied. After a rank replied
        with an error, the others get `stuck_after` seconds; those that stay silent answer
        {"stuck": True}."""
        replies: dict[int, dict[str, Any]] = {}
        deadline = None
        while len(replies) < self.size:
            waiting = {self.replies[k]: k for k in range(self.size) if k not in replies}
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait(list(waiting), timeout)
            if not ready:  # the deadline passed
                for k in waiting.values():
                    replies[k] = {"stuck": True}
                break
            for conn in ready:
                k = waiting[conn]
                try:
                    replies[k] = pickle.loads(conn.recv_bytes())
                except EOFError:
                    raise RankDied(k, self.processes[k].wait(), during) from None
                if ("raised" in replies[k] or "fatal" in replies[k]) and deadline is None and stuck_after is not None:
                    deadline = time.monotonic() + stuck_after
        return [replies[k] for k in range(self.size)]

    def run(self, subject: str, dtype: str, seed: int) -> list[dict[str, Any]]:
        request = {"subject": subject, "dtype": dtype, "seed": seed}
        for conn in self.requests:
            conn.send_bytes(pickle.dumps(request))
        return self._gather(f"in {subject} at {dtype}", stuck_after=STUCK_AFTER_SECONDS)

    def kill(self) -> None:
        """Ends every rank now (SIGKILL) and waits for them: nothing is left behind."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            process.wait()
        for conn in self.requests + self.replies:
            conn.close()
        self.processes, self.requests, self.replies = [], [], []
        atexit.unregister(self.kill)
