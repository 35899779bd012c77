"""While a case runs, the seconds it has spent compiling, as the backend counts them, told to the
harness as they grow. A case's `--timeout` counts its run time only (Scheduler): a device that
compiles every new signature (seconds an executable, minutes a model graph) must not have its
compiler's time charged to the case as a hang.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from protocol import emit

# The counters of compile_cache_stats() (docs/backends.md) whose growth is compile time: the
# compiler's, and waiting for another process compiling the same executable; and the time the
# lookups under way now have spent so far, which a long compile shows before it ends.
SPENT = ("compile_seconds", "claim_wait_seconds")
UNDER_WAY = "compiling_seconds"
PROGRESS = "compiling"  # the message's key: {"compiling": {"case": ID, "seconds": S}}

INTERVAL = 0.2  # seconds between readings of the counters: how late the harness learns of compile time
STEP = 0.05  # growth worth a message


def spent(stats: dict[str, float]) -> float:
    """Compile time done, from one reading of the counters."""
    return sum(stats.get(key, 0.0) for key in SPENT)


class CompileProgress:
    """Reads the backend's compile counters every INTERVAL on a thread of its own (for the
    worker's life) while a case (case()) runs, and writes {"compiling": {"case", "seconds"}} when
    the case's compile time has grown by STEP: never after the case's result, which is written
    once case() has ended."""

    def __init__(self, out: TextIO, stats: Callable[[], dict[str, float]]) -> None:
        self._out, self._stats = out, stats
        self._lock = threading.Lock()  # the case, its baseline and what was told
        self._case: str | None = None
        self._base = self._told = 0.0
        threading.Thread(target=self._watch, name="compile-progress", daemon=True).start()

    @contextmanager
    def case(self, case_id: str) -> Iterator[None]:
        with self._lock:
            self._case, self._base, self._told = case_id, spent(self._stats()), 0.0
        try:
            yield
        finally:
            with self._lock:
                self._case = None

    def _watch(self) -> None:
        while True:
            time.sleep(INTERVAL)
            with self._lock:
                if self._case is None:
                    continue
                try:
                    stats = self._stats()
                except Exception as exc:  # noqa: BLE001 - a reading missed: its compile time counts as run time
                    print(f"compile progress: the backend's counters could not be read: {exc!r}", file=sys.stderr)
                    continue
                seconds = spent(stats) - self._base + stats.get(UNDER_WAY, 0.0)
                if seconds >= self._told + STEP:
                    emit(self._out, {PROGRESS: {"case": self._case, "seconds": seconds}})
                    self._told = seconds
