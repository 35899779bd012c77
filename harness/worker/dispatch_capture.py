"""Where a case's aten ops ran on the device, told by the dispatcher: for any backend, with no help
from it (docs/backends.md, "Native or fallback").

A TorchDispatchMode sees every aten op a case calls on the device's tensors, below autograd (so
the backward's ops too) and after PyTorch's implicit decompositions. Each is classified by what
the dispatcher would run for the device's dispatch key (PrivateUse1):

- `device`: a kernel the backend registered for its key: native ("registered"; a kernel that
  computes on the host is still the backend's own kernel);
- `composite` or `view`: a kernel PyTorch shares with every backend, made of other ops: judged by
  its parts, which the capture follows into (the kernel is called with the capture active);
- `fallback`: no kernel of the backend's, only its boxed fallback (the CPU fallback).

What the capture cannot see: the inside of a kernel (ops a registered kernel calls itself are
the backend's business) and the inside of a compiled graph (the mode steps aside while torch.compile
traces, and the executable a backend builds is opaque): a suite says so with `unobservable()`.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from vocabulary import Kernel, Route

DEVICE_KEY = "PrivateUse1"
# The dispatcher's composite keys that serve a backend with no kernel of its own, in the order the
# dispatcher prefers them (an op with an explicit composite kernel ignores the implicit one).
COMPOSITE_KEYS = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


@functools.lru_cache(maxsize=None)
def kernel_kind(name: str, device_key: str = DEVICE_KEY) -> Kernel | None:
    """What the dispatcher runs for overload `name` ("aten::add.Tensor") on `device_key`: DEVICE,
    VIEW (a composite view kernel), COMPOSITE or FALLBACK; None for an overload it does not know."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    try:
        if has(name, device_key):
            return Kernel.DEVICE
        composite = composite_key(name)
    except RuntimeError:
        return None
    if composite is not None:
        return Kernel.VIEW if _is_view(name) else Kernel.COMPOSITE
    return Kernel.FALLBACK


@functools.lru_cache(maxsize=None)
def composite_key(name: str) -> str | None:
    """The composite key whose kernel serves `name` on a backend without one, or None."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return next((key for key in COMPOSITE_KEYS if has(name, key)), None)


@functools.lru_cache(maxsize=None)
def _is_view(name: str) -> bool:
    """Whether the overload is a view (its schema aliases an input in its output)."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    try:
        packet = getattr(getattr(torch.ops, namespace), base)
        return bool(getattr(packet, overload or "default").is_view)
    except (AttributeError, RuntimeError):
        return False


def _on_device(values: Any, device_type: str) -> bool:
    """Whether a call's arguments put it on the device: a tensor there (also inside a list, as
    cat's), or a factory's device= naming it."""
    for value in values:
        if isinstance(value, torch.Tensor):
            if value.device.type == device_type:
                return True
        elif isinstance(value, (list, tuple)):
            if _on_device(value, device_type):
                return True
        elif isinstance(value, torch.device) and value.type == device_type:
            return True
    return False


class Capture(TorchDispatchMode):
    """Counts each aten overload a case runs on the device by how the dispatcher runs it (natively,
    through the fallback, or as a composite followed into its parts), while active
    (`with capture:`)."""

    def __init__(self, device_type: str, device_key: str = DEVICE_KEY) -> None:
        super().__init__()
        self.device_type, self.device_key = device_type, device_key
        # Route.NATIVE and Route.FALLBACK, and Kernel.COMPOSITE: ops followed into their parts
        self.counts: dict[str, dict[str, int]] = {Route.NATIVE: {}, Route.FALLBACK: {}, Kernel.COMPOSITE: {}}
        # Below the mode: the device key alone, whose computed kernel is the composite one.
        self.keyset = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, device_key))
        self._descending: set[str] = set()  # composite ops being followed: never twice in a row

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # Active during torch.compile, a mode would make Dynamo run the frame eagerly: the
        # compile suite would test eager mode. With this, Dynamo compiles as if no mode were on,
        # and the mode sees what the compiled code runs through the dispatcher.
        return True

    def clear(self) -> None:
        for counts in self.counts.values():
            counts.clear()

    def _count(self, route: str, name: str) -> None:
        counts = self.counts[route]
        counts[name] = counts.get(name, 0) + 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not isinstance(func, torch._ops.OpOverload) or not (
                _on_device(args, self.device_type) or _on_device(kwargs.values(), self.device_type)):
            return func(*args, **kwargs)
        name = func.name()
        kind = kernel_kind(name, self.device_key)
        if kind == Kernel.COMPOSITE and name not in self._descending:
            self._count(Kernel.COMPOSITE, name)
            self._descending.add(name)
            try:
                with self:  # the composite kernel, with its parts dispatched (and seen) again
                    return func.redispatch(self.keyset, *args, **kwargs)
            finally:
                self._descending.discard(name)
        if kind == Kernel.DEVICE:
            self._count(Route.NATIVE, name)
        elif kind == Kernel.FALLBACK:
            self._count(Route.FALLBACK, name)
        elif kind is not None:
            # A view kernel every backend shares computes nothing: not followed (its detach
            # and alias would call back into the mode from below the dispatcher).
            self._count(Kernel.COMPOSITE, name)
        return func(*args, **kwargs)

