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
calls kept more device memory than their results hold (AllocationWatch).

A device's backward runs on the autograd engine's thread for that device, which lets go of its
last graph task (the gradients it handed back, kept by the task's result; the graph's roots) only
after the caller already has its result. Read at once, the memory of a backward that just ended may
still be held, for some microseconds, longer on a busy machine: reading settled memory first waits
for that thread (AllocatedMemory.settled)."""

from __future__ import annotations

import gc
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


def allocated_reader(device: str) -> AllocatedMemory | None:
    """The bytes tensors hold on `device`, or None when the backend offers no way to read them."""
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
        return AllocatedMemory(device, read)
    return None


class AllocatedMemory:
    """Reads the bytes tensors hold on one device: `memory()` now, `memory.settled()` once what
    only a reference cycle or the device's autograd thread still held is let go."""

    def __init__(self, device: str, read: Callable[[], int]) -> None:
        self.device, self.read = device, read
        self._autograd_waitable = True

    def __call__(self) -> int:
        return self.read()

    def settled(self, generation: int = 2) -> int:
        """Allocated bytes once Python has let go of what only a reference cycle still held (the
        cycles of the youngest `generation`s: 1, the case's own, about a millisecond; 2, every one
        the worker did not freeze before its first case, a few milliseconds; worker.serve) and the
        device's autograd thread has let go of the last backward's graph task."""
        gc.collect(generation)
        self._wait_for_autograd_thread()
        return self.read()

    def _wait_for_autograd_thread(self) -> None:
        """A tiny backward through the device's autograd thread: that thread takes it up only
        after it has dropped the graph task before it, and the tiny one's own task holds nothing
        on the device (the gradient it hands back is the CPU leaf's)."""
        if not self._autograd_waitable:
            return
        try:
            with torch.enable_grad():
                leaf = torch.zeros((), requires_grad=True)
                torch.autograd.grad(leaf.to(self.device) * 2.0, leaf)
        except Exception:  # noqa: BLE001 - a backend without autograd on the device: read as it is
            self._autograd_waitable = False


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
