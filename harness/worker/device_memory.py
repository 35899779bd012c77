"""Per-case resource balance: after a case and its tensors are gone, the device's allocated memory is
back where it started. A backend that keeps a buffer alive on every call of an op runs a training
loop out of device memory after some thousand steps, and no comparison of values sees it
(PyTorch's own TestCase checks the same for CUDA: CudaMemoryLeakCheck).

Allocated memory is read through the device module's memory API (`torch.<device>.memory_allocated`),
else through torch.accelerator's; memory the allocator caches but no tensor holds does not count.
A backend with neither cannot be measured, and a case's evidence says so.

A case that grew the allocated memory is run again: what its first run left behind may be a cache
warming up (the worker's, PyTorch's or the backend's compile cache), which a second run does not
grow again. Growth on the second run too is a leak: the case fails with the bytes and the ops whose
calls kept more device memory than their results hold (AllocationWatch)."""

from __future__ import annotations

import gc
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


def allocated_reader(device: str) -> Callable[[], int] | None:
    """A function reading the bytes tensors hold on `device`, or None when the backend offers no
    way to read them."""
    index = torch.device(device).index or 0
    module = getattr(torch, torch.device(device).type, None)
    candidates: list[Callable[[], int]] = []
    if module is not None and callable(getattr(module, "memory_allocated", None)):
        candidates.append(lambda: int(module.memory_allocated(index)))
    candidates.append(lambda: int(torch.accelerator.memory_allocated(index)))
    for read in candidates:
        try:
            read()
        except Exception:  # noqa: BLE001 - a backend without memory statistics raises anything
            continue
        return read
    return None


def settled(read: Callable[[], int], generation: int = 2) -> int:
    """Allocated bytes once Python has let go of what only a reference cycle still held: the
    cycles of the youngest `generation`s (1: the case's own, about a millisecond; 2: every one the
    worker did not freeze before its first case, a few milliseconds; worker.serve)."""
    gc.collect(generation)
    return read()


def _storages(value: Any, device_type: str) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in pytree.tree_leaves(value)
            if isinstance(t, torch.Tensor) and t.device.type == device_type and t.layout == torch.strided}


class AllocationWatch(TorchDispatchMode):
    """Per aten op on the device: the bytes allocated across its call beyond the storages of its
    results. A kernel that keeps a buffer alive shows up here; one that frees its temporaries
    does not."""

    def __init__(self, device_type: str, read: Callable[[], int]) -> None:
        super().__init__()
        self.device_type, self.read = device_type, read
        self.kept: dict[str, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        before = self.read()
        out = func(*args, **kwargs)
        grown = self.read() - before
        if grown > 0:  # only then: which results are new storage (an input's storage is not)
            inputs = _storages((args, kwargs), self.device_type)
            results = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)
                       and t.device.type == self.device_type and t.layout == torch.strided
                       and t.untyped_storage().data_ptr() not in inputs]
            grown -= sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in results}.values())
            if grown > 0:
                name = func.name() if hasattr(func, "name") else str(func)
                self.kept[name] = self.kept.get(name, 0) + grown
        return out
