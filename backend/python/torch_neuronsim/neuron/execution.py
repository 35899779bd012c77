"""What the device did, as TorchNeuron's metrics report it: work still queued, ops run and fused,
executables compiled (and the seconds they took, apart from running), compile-cache hits by kind."""

from __future__ import annotations

from typing import Any

from .. import _C
from . import _device_index, device_count

__all__ = ["metrics", "pending"]


def pending(device: Any = None) -> int:
    """Ops (and event markers) queued on the device and not yet run."""
    return _C._pending(_device_index(device))


def metrics() -> dict[str, Any]:
    """One snapshot of the process's execution and compilation counters.

    ``pending``: work queued per device; ``execution``: ops queued, executables run, ops fused and
    fused chains, synchronizing calls that waited, errors raised late; ``compilation``: executables
    compiled, seconds compiling (the emulated latency included), hits in memory and on disk,
    failed compiles, claims waited for, entries evicted."""
    cache = _C.compile_cache_stats()
    return {
        "pending": {index: _C._pending(index) for index in range(device_count())},
        "execution": _C.execution_stats(),
        "compilation": {
            "compiled": cache["compiles"],
            "compile_seconds": cache["compile_seconds"],
            "memory_hits": cache["memory_hits"],
            "disk_hits": cache["disk_hits"],
            "failed_compiles": cache["failed_compiles"],
            "failure_hits": cache["failure_hits"],
            "claims_waited": cache["claims_waited"],
            "evicted": cache["evicted"],
        },
    }
