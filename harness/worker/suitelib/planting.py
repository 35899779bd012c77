"""Planted defects: the harness tests itself by planting, for every class of bug a check claims to
catch, one kernel with that bug in a test-only backend, and asserting the outcome. A suite keeps
the defects its checks must catch beside it, in `planted.py` (`DEFECTS = {class: Defect(...)}`);
`harness/tests/defects_backend.py` collects every suite's and plants them on torch_neuronsim
(DEFECTS_CLASSES picks classes). Nothing here runs in a real run: a suite's planted.py is imported
only by that backend.

What a kernel cannot carry (a device-module function, a Tensor method, a Dynamo backend, a
torch.distributed function) a defect plants as a patch: `patches` maps (target, name) to the
replacement set there when the class is planted. The target is a module or a class, or the import
path of an object (resolved then, so that naming it imports nothing until the class is planted;
how a dict, which is no key, is named); the name is an attribute of the target, or a key when the
target is a dict (a registry such as Dynamo's backends).

The kernels compute on the CPU (so that a kernel never calls itself) and return device tensors;
the helpers below are the ways of misreading memory that several defects share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch


@dataclass(frozen=True)
class Defect:
    """One class of bug, planted: the aten ops it replaces (overload name -> kernel), what is wrong
    with them, and the check (and variant) that must catch it; what else it replaces, in `patches`."""

    kernels: Mapping[str, Callable[..., Any]]
    defect: str
    caught_by: str
    dispatch_key: str = "PrivateUse1"  # AutogradPrivateUse1: a device autograd kernel
    opt_in: bool = False  # planted only when DEFECTS_CLASSES names it (it changes what other cases see)
    mixes_devices: bool = False  # its kernels take operands on two devices (the defect itself)
    on_synchronize: Callable[[], None] | None = None  # what waiting on the device ends (a fused chain)
    # (target: a module, a class or an import path; attribute or dict key) -> what is set there when planted
    patches: Mapping[tuple[Any, str], Any] = field(default_factory=dict)


def on_cpu(value: Any) -> Any:
    return value.cpu() if isinstance(value, torch.Tensor) else value


def as_if_contiguous(t: torch.Tensor) -> torch.Tensor:
    """`t`'s elements read as a contiguous tensor would be: its storage from its offset, in order,
    ignoring its strides (what a kernel that assumes contiguity reads)."""
    flat = t.as_strided((t.numel(),), (1,), t.storage_offset())
    return flat.cpu().reshape(t.shape)


def storage_order(t: torch.Tensor) -> torch.Tensor:
    """`t`'s elements as a 1-d view of its storage from its offset, in order: where a kernel that
    ignores `t`'s strides writes."""
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


def current_device(like: torch.Tensor) -> torch.device:
    """The current device of `like`'s type, whatever `like`'s own index: where a kernel without a
    device guard allocates."""
    return torch.device(like.device.type, torch.accelerator.current_device_index())
