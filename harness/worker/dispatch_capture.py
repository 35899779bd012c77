"""Where a case's aten ops ran on the device, told by the dispatcher: for any backend, with no help
from it (docs/backends.md, "Native or fallback").

A TorchDispatchMode sees every aten op a case calls on the device's tensors, below autograd (so
the backward's ops too) and after PyTorch's implicit decompositions. Each is classified by what
the dispatcher would run for the device's dispatch key (PrivateUse1, or its autograd key: a
backend's autograd kernel is its own), afresh for each case (clear()), since a case may register
kernels (torch.library):

- `device`: a kernel the backend registered for its key: native ("registered"), unless the call
  copied device data to the host inside the kernel (Tensor.cpu(), the CPU fallback's copies):
  then the kernel computed on the host, TorchNeuron's "Host-only", and the call is `host_only`;
- `composite` or `view`: a kernel PyTorch shares with every backend, made of other ops: judged by
  its parts, which the capture follows into (the kernel is called with the capture active);
- `fallback`: no kernel of the backend's, only its boxed fallback (the CPU fallback).

What the capture cannot see: the inside of a kernel beyond its copies to the host (ops a
registered kernel calls itself are the backend's business; a kernel that reads device memory
on the host without the dispatcher is not seen) and the inside of a compiled graph (the mode steps aside while torch.compile
traces, and the executable a backend builds is opaque): a suite says so with `unobservable()`.
What it does not count: the harness's own work, moving a case's inputs to the device and its
results back, and the CPU reference (uncounted()). The harness's CPU work (making samples and
their variants) steps it aside too: nothing there would count, but each op would be a call into
Python, most of a case's ops.

The same account is kept in C++ where it can be built (native_capture.py, a RecordFunction
observer, about a twentieth of the cost per op); `capture_for()` picks it, and this module's
mode serves where it cannot (no compiler) or is not wanted (NEURON_CONFORM_CAPTURE=python).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterable, TypeVar

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode, _pop_mode_temporarily

from native_capture import NativeCapture, load
from vocabulary import Kernel, Route

T = TypeVar("T")
DEVICE_KEY = "PrivateUse1"
_NUMBERS = (int, float, complex)  # what __torch_dispatch__ hands a wrapped number back as
# The dispatcher's composite keys that serve a backend with no kernel of its own, in the order the
# dispatcher prefers them (an op with an explicit composite kernel ignores the implicit one).
COMPOSITE_KEYS = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


@functools.lru_cache(maxsize=None)
def kernel_kind(name: str, device_key: str = DEVICE_KEY) -> Kernel | None:
    """What the dispatcher runs for overload `name` ("aten::add.Tensor") on `device_key`: DEVICE
    (a kernel of the backend's, on the key or its autograd key), VIEW (a composite view kernel),
    COMPOSITE or FALLBACK; None for an overload it does not know. Cached until refresh()."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    try:
        if has(name, device_key) or has(name, f"Autograd{device_key}"):
            return Kernel.DEVICE
        composite = composite_key(name)
    except RuntimeError:
        return None
    if composite is not None:
        return Kernel.VIEW if _is_view(name) else Kernel.COMPOSITE
    return Kernel.FALLBACK


def refresh() -> None:
    """Forgets the cached classifications: the dispatcher's registrations may have changed."""
    kernel_kind.cache_clear()
    composite_key.cache_clear()


# The copies every device-to-host path of the dispatcher ends in (Tensor.cpu(), .to("cpu"), the
# CPU fallback's _to_cpu): a kernel of the backend that makes one computed on the host. The
# kernels of these ops move data where they are asked to, and a collective's (c10d) between
# processes through the process group's transport, which may stage through the host: never
# host-only.
_COPIES = frozenset({"aten::copy_", "aten::_copy_from", "aten::_copy_from_and_resize", "aten::_to_copy"})


def _moves_data(name: str) -> bool:
    return name in _COPIES or name.startswith("c10d::")


def _moves_to_host(args: tuple, kwargs: dict, result: Any, device_type: str) -> bool:
    """Whether a call took device data and gave back a host tensor (a copy, or .to("cpu") as the
    mode sees it from Python). A scalar read (item(), a one-element copy) sizes or parametrises
    what the device computes and computes nothing itself: not a round trip here."""
    if not any(isinstance(t, torch.Tensor) and t.device.type == device_type and t.numel() > 1
               for t in (*args, *kwargs.values())):
        return False
    results = result if isinstance(result, (list, tuple)) else (result,)
    return any(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in results)


class _HostWatch(TorchDispatchMode):
    """Active while a device kernel runs under the Python capture: whether the kernel copies
    device data to the host, or calls an op the CPU fallback runs (the C++ observer's account of
    the same, capture_observer.cpp, sees the fallback's copies)."""

    def __init__(self, device_type: str) -> None:
        super().__init__()
        self.device_type, self.to_host = device_type, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if not self.to_host and isinstance(func, torch._ops.OpOverload):
            self.to_host = (_moves_to_host(args, kwargs, result, self.device_type) or
                            kernel_kind(func.name()) == Kernel.FALLBACK and _on_device(args, self.device_type))
        return result


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


class uncounted(contextlib.ContextDecorator):
    """Steps the active capture aside for the harness's own work: moving a case's inputs to the
    device and its results back to compare them, and the case's CPU reference. None of it is an
    op the case ran on the device (on a backend whose copies fall back, counting them would make
    every case a fallback), and each op would cost a call into Python. A context manager or a
    decorator (`@uncounted()`); a class, not a generator: a case enters it thousands of times."""

    __slots__ = ("_resume", "_popped")

    def __enter__(self) -> None:
        self._resume = NativeCapture.pause_here()  # the observer counting on this thread, stopped
        self._popped = None
        if self._resume is None and isinstance(_get_current_dispatch_mode(), Capture):
            self._popped = _pop_mode_temporarily()
            self._popped.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._popped is not None:
            self._popped.__exit__(*exc)
        if self._resume is not None:
            self._resume.resume_here()

    def _recreate_cm(self) -> uncounted:
        return uncounted()  # as a decorator, a fresh one per call: calls may nest or recurse


def made_uncounted(make: Callable[..., Iterable[T]]) -> Callable[..., list[T]]:
    """Decorates a generator function that makes the harness's CPU inputs (a sample's variants):
    its items are made at once, with the capture aside, and returned as a list. A generator cannot
    keep the capture aside across its yields, between which the case runs the items."""

    @functools.wraps(make)
    def made(*args: Any, **kwargs: Any) -> list[T]:
        with uncounted():
            return list(make(*args, **kwargs))
    return made


def _on_device(values: Any, device_type: str) -> bool:
    """Whether a call's arguments put it on the device: a tensor there (also inside a list, as
    cat's), or a factory's device= naming it. Called for every op while capturing: kept cheap."""
    for value in values:
        kind = type(value)
        if kind is list or kind is tuple:
            if value and _on_device(value, device_type):
                return True
        elif isinstance(value, torch.Tensor):
            if value.device.type == device_type:
                return True
        elif kind is torch.device and value.type == device_type:
            return True
    return False


def capture_for(device_type: str) -> tuple[Capture | NativeCapture, str]:
    """The capture for a device (`with capture:`, `counts`, `clear()`) and which it is: "native"
    (C++) for the PrivateUse1 device where the observer loads, else "python" and why not."""
    if device_type != torch._C._get_privateuse1_backend_name():
        return Capture(device_type), f"python ({device_type} is not the PrivateUse1 device)"
    ops, why = load()
    return (NativeCapture(ops), "native") if ops is not None else (Capture(device_type), f"python ({why})")


class Capture(TorchDispatchMode):
    """Counts each aten overload a case runs on the device by how the dispatcher runs it (natively,
    through the fallback, or as a composite followed into its parts), while active
    (`with capture:`)."""

    def __init__(self, device_type: str, device_key: str = DEVICE_KEY) -> None:
        super().__init__()
        self.device_type, self.device_key = device_type, device_key
        # Route.NATIVE, Route.FALLBACK, Route.HOST_ONLY, and Kernel.COMPOSITE: ops followed into
        # their parts
        self.counts: dict[str, dict[str, int]] = {Route.NATIVE: {}, Route.FALLBACK: {}, Route.HOST_ONLY: {},
                                                  Kernel.COMPOSITE: {}}
        # Below the mode: the device key alone, whose computed kernel is the composite one.
        self.keyset = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, device_key))
        self._descending: set[str] = set()  # composite ops being followed: never twice in a row
        # by OpOverload: _route_of
        self._routes: dict[Any, tuple[str, dict[str, int] | None, bool, bool]] = {}

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # Active during torch.compile, a mode would make Dynamo run the frame eagerly: the
        # compile suite would test eager mode. With this, Dynamo compiles as if no mode were on,
        # and the mode sees what the compiled code runs through the dispatcher.
        return True

    def clear(self) -> None:
        for counts in self.counts.values():
            counts.clear()
        self._routes.clear()  # classified afresh: a case may register kernels
        refresh()

    def _route_of(self, func) -> tuple[str, dict[str, int] | None, bool, bool]:
        """(name, the counts it adds to or None, whether to follow it into its parts, whether its
        Tensor arguments need Python numbers made tensors), once per overload: the capture's cost
        is paid on every op the device runs."""
        if not isinstance(func, torch._ops.OpOverload):
            return "", None, False, False
        name = func.name()
        wraps_numbers = not _takes_numbers(func)
        kind = kernel_kind(name, self.device_key)
        if kind == Kernel.DEVICE:
            return name, self.counts[Route.NATIVE], False, wraps_numbers
        if kind == Kernel.FALLBACK:
            return name, self.counts[Route.FALLBACK], False, wraps_numbers
        if kind is None:
            return name, None, False, wraps_numbers
        # A view kernel every backend shares computes nothing: not followed (its detach and
        # alias would call back into the mode from below the dispatcher).
        return name, self.counts[Kernel.COMPOSITE], kind == Kernel.COMPOSITE, wraps_numbers

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        device_type = self.device_type
        if not (_on_device(args, device_type) or (kwargs and _on_device(kwargs.values(), device_type))):
            return func(*args, **kwargs) if kwargs else func(*args)
        route = self._routes.get(func)
        if route is None:
            route = self._routes[func] = self._route_of(func)
        name, counts, follow, wraps_numbers = route
        if counts is not None:
            counts[name] = counts.get(name, 0) + 1
        if follow and name not in self._descending:
            self._descending.add(name)
            try:
                args, kwargs = _numbers_as_tensors(func, args, kwargs or {})
                with self:  # the composite kernel, with its parts dispatched (and seen) again
                    return func.redispatch(self.keyset, *args, **kwargs)
            finally:
                self._descending.discard(name)
        if wraps_numbers:  # a wrapped number comes as a number
            args, kwargs = _numbers_as_tensors(func, args, kwargs or {})
        if counts is not self.counts[Route.NATIVE] or _moves_data(name):
            return func(*args, **kwargs) if kwargs else func(*args)
        # The backend's kernel, run below the Python key so that what it calls reaches the watch:
        # does it compute on the host?
        args, kwargs = _numbers_as_tensors(func, args, kwargs or {})
        with _HostWatch(device_type) as watch:
            result = func.redispatch(self.keyset, *args, **kwargs)
        if watch.to_host:
            counts[name] -= 1
            if not counts[name]:
                del counts[name]
            host = self.counts[Route.HOST_ONLY]
            host[name] = host.get(name, 0) + 1
        return result


@functools.lru_cache(maxsize=None)
def _tensor_arguments(func) -> tuple[frozenset[int], frozenset[str]]:
    """The positions and names of the schema's Tensor arguments."""
    tensor = torch._C.TensorType.get()
    arguments = func._schema.arguments
    return (frozenset(i for i, a in enumerate(arguments) if a.type == tensor),
            frozenset(a.name for a in arguments if a.type == tensor))


def _as_tensor(value: Any, peer: torch.Tensor | None) -> Any:
    """A Python number as a 0-dim CPU tensor that promotes as the number would (a "wrapped number",
    which Python cannot make): of the dtype the number and the call's first tensor promote to
    (uint16 with 2 stays uint16, float16 with 2.0 stays float16); anything else as it is."""
    if not isinstance(value, _NUMBERS):
        return value
    return torch.tensor(value, dtype=torch.result_type(peer, value) if peer is not None else None)


def _peer(values: Any) -> torch.Tensor | None:
    """The call's first tensor with dimensions (else its first tensor): what its numbers promote with."""
    tensors = [t for t in values if isinstance(t, torch.Tensor)]
    return next((t for t in tensors if t.dim() > 0), tensors[0] if tensors else None)


def _numbers_as_tensors(func, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments with Python numbers where the schema takes a Tensor made tensors:
    __torch_dispatch__ hands a wrapped number back as the number, and a redispatch does not
    convert it as a call of the op does."""
    if not any(isinstance(a, _NUMBERS) for a in args) and \
            not any(isinstance(v, _NUMBERS) for v in kwargs.values()):
        return args, kwargs  # the common call: nothing to wrap
    positions, names = _tensor_arguments(func)
    peer = _peer([*args, *kwargs.values()])
    return (tuple(_as_tensor(a, peer) if i in positions else a for i, a in enumerate(args)),
            {k: _as_tensor(v, peer) if k in names else v for k, v in kwargs.items()})


@functools.lru_cache(maxsize=None)
def _takes_numbers(func) -> bool:
    """Whether the op binds Python numbers to its Tensor arguments itself (mul, add: not copysign)."""
    return torch._C._should_allow_numbers_as_tensors(func.name().split("::")[-1].split(".")[0])
