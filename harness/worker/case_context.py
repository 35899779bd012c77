"""The context a suite runs a case in (`ctx`, suites/README.md): the backend under test, the device,
the seed, and what the case ran, each aten op on the device by route. Used by the worker and by
every process that runs cases for it (the distributed suite's ranks, check-model's probe)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch

import device_memory
from dispatch_capture import capture_for
from vocabulary import Route


def ops_field(route: Route) -> str:
    """A result's field for the ops of a route: "native_ops", "fallback_ops", "host_only_ops"."""
    return f"{route}_ops"


def _add_counts(into: dict[str, int], counts: dict[str, int]) -> None:
    for op, count in counts.items():
        into[op] = into.get(op, 0) + count


# The backend's own op tracking (optional, docs/backends.md): what ran natively, what fell back.
TRACKING_FUNCTIONS = ("get_executed_ops", "get_fallback_ops", "clear_op_tracking")


class Context:
    """What a suite needs to run a case against the backend under test, and what the case ran:
    each aten op on the device by route, from the dispatcher (dispatch_capture.py) and, where the
    backend tracks its ops itself, from the backend."""

    def __init__(self, backend: ModuleType, device: str, seed: int) -> None:
        self.backend = backend
        self.device = device
        self.seed = seed
        self.tracking = all(callable(getattr(backend, name, None)) for name in TRACKING_FUNCTIONS)
        self.capture, self.capture_kind = capture_for(device.split(":")[0])
        # bytes the device's tensors hold now, or None when the backend cannot say (device_memory.py)
        self.memory = device_memory.allocated_reader(device)
        self._other_processes: dict[str, dict[str, int]] = {ops_field(r): {} for r in Route}
        self._unobserved: list[str] = []
        # The reviewed tolerance the harness gave with the case (a skip list's tolerance entry:
        # {"rtol", "atol", "dtype", "entry"}), and whether the case compared anything with it.
        self.tolerance_given: dict[str, Any] | None = None
        self.tolerance_applied = False

    def reviewed_tolerance(self, dtype: str) -> dict[str, Any] | None:
        """The reviewed tolerance for the case's values at `dtype` (a case id's dtype name): the
        one given with the case where its dtypes include `dtype`, else None."""
        given = self.tolerance_given
        if given is None or not ({"*", dtype} & set(given["dtype"])):
            return None
        self.tolerance_applied = True
        return given

    def clear_tracking(self) -> None:
        if self.tracking:
            self.backend.clear_op_tracking()
        self.capture.clear()
        self._other_processes = {ops_field(r): {} for r in Route}
        self._unobserved = []

    def unobservable(self, what: str) -> None:
        """Part of the case ran where the dispatcher capture cannot see (a compiled graph, another
        process): without the backend's own tracking, a match is native_unknown, not a pass."""
        if what not in self._unobserved:
            self._unobserved.append(what)

    def add_tracked_ops(self, other: dict[str, Any]) -> None:
        """Ops the case ran in another process (the distributed suite's ranks), as that process's
        tracked_ops() gave them, counted with this process's own."""
        for field, mine in self._other_processes.items():
            _add_counts(mine, other.get(field, {}))

    def synchronize(self) -> None:
        """Waits for the work queued on every device of the backend's type, so that an error an op
        raises on an asynchronous device surfaces here, inside the call that waits; nothing for a
        backend whose device module has no synchronize (a synchronous one)."""
        module = getattr(torch, self.device.split(":")[0], None)
        sync = getattr(module, "synchronize", None)
        if not callable(sync):
            return
        count = getattr(module, "device_count", None)
        for index in range(count() if callable(count) else 1):
            sync(index)

    def compile_cache(self) -> dict[str, float]:
        """The backend's compile-cache counters, if it reports them (compile_cache_stats())."""
        stats = getattr(self.backend, "compile_cache_stats", None)
        return dict(stats()) if callable(stats) else {}

    def tracked_ops(self) -> dict[str, dict[str, int]]:
        """The ops the case ran by route, as a result's fields: {"native_ops": {op: calls},
        "fallback_ops": ..., "host_only_ops": ...}. Native and fallback are the backend's account
        where it tracks its ops, else the dispatcher's; host-only calls (a kernel of the backend
        that copied device data to the host) are the dispatcher's, taken out of native (and left
        out where the backend's account calls the op a fallback)."""
        seen = self.capture.counts
        if self.tracking:
            native, fallback = dict(self.backend.get_executed_ops()), dict(self.backend.get_fallback_ops())
        else:
            native, fallback = dict(seen[Route.NATIVE]), dict(seen[Route.FALLBACK])
        # a kernel whose copies the backend itself calls its fallback (the bundled engine's, for
        # shapes it cannot compile) is the fallback
        host_only = {op: calls for op, calls in seen[Route.HOST_ONLY].items() if op not in fallback}
        for op, calls in host_only.items():
            left = native.get(op, 0) - calls
            if left > 0:
                native[op] = left
            else:
                native.pop(op, None)
        ops = {ops_field(Route.NATIVE): native, ops_field(Route.FALLBACK): fallback,
               ops_field(Route.HOST_ONLY): host_only}
        for field, theirs in self._other_processes.items():
            _add_counts(ops[field], theirs)
        return ops

    @property
    def ops_source(self) -> str:
        """Whose account of the ops decides native or fallback: the backend's, or the dispatcher's."""
        return "backend" if self.tracking else "dispatcher"

    def observation(self, ops: dict[str, dict[str, int]]) -> dict[str, Any]:
        """The evidence of how the case's ops (tracked_ops()) were observed: `ops_source`, what
        could not be seen, and where the dispatcher and the backend's tracking disagree."""
        observed: dict[str, Any] = {"ops_source": self.ops_source}
        if self._unobserved:
            observed["unobserved"] = list(self._unobserved)
        if self.tracking:
            seen = self.capture.counts
            native, fallback = ops[ops_field(Route.NATIVE)], ops[ops_field(Route.FALLBACK)]
            disagree = {op: {"dispatcher": Route.NATIVE, "backend": Route.FALLBACK}
                        for op in seen[Route.NATIVE] if op in fallback}
            disagree |= {op: {"dispatcher": Route.FALLBACK, "backend": Route.NATIVE}
                         for op in seen[Route.FALLBACK] if op in native}
            if disagree:
                observed["ops_disagree"] = disagree
        return observed

    def route_unknown(self) -> bool:
        """Whether a match cannot be called native: part of the case ran unseen and the backend
        does not track its ops."""
        return bool(self._unobserved) and not self.tracking


# The compile-cache counters evidence keeps, where the backend's compile_cache_stats() has them
# (docs/backends.md): executables compiled, found in memory and on disk, the seconds compiling.
COMPILE_COUNTERS = ("compiles", "memory_hits", "disk_hits", "compile_seconds", "compiled_ops", "loaded_ops")


def declared_compile_latency(backend: ModuleType) -> dict[str, float] | None:
    """What compiling an executable costs on the backend's device, as the backend declares it
    (declared_compile_latency(): base_seconds plus per_op_seconds for each op in it), or None."""
    declared = getattr(backend, "declared_compile_latency", None)
    return dict(declared()) if callable(declared) else None


def estimated_seconds(executables: float, ops: float, declared: dict[str, float]) -> float:
    """What compiling `executables` holding `ops` ops in all costs at a declared latency."""
    return executables * declared["base_seconds"] + ops * declared["per_op_seconds"]


def compile_estimate(delta: dict[str, float], declared: dict[str, float] | None) -> dict[str, float] | None:
    """What the executables of a compile_cache_delta() cost to compile at the declared latency:
    `seconds` for those compiled (the cache as it was), `cold_seconds` for all of them (those
    loaded from disk compiled too); None where the backend declares no latency or no op counts."""
    if declared is None or "compiled_ops" not in delta:
        return None
    compiled = estimated_seconds(delta["compiles"], delta["compiled_ops"], declared)
    loaded = estimated_seconds(delta.get("disk_hits", 0), delta.get("loaded_ops", 0), declared)
    return {**declared, "seconds": compiled, "cold_seconds": compiled + loaded}


def compile_cache_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What happened to the backend's compile cache between two compile_cache() readings: each
    counter's growth, and `hits` (memory and disk together)."""
    delta = {key: after[key] - before.get(key, 0) for key in COMPILE_COUNTERS if key in after}
    delta["hits"] = delta.get("memory_hits", 0) + delta.get("disk_hits", 0)
    delta.setdefault("compiles", 0)
    return delta
