"""``torch.neuron``: the device module of the emulated neuron device, shaped like torch.cuda."""

from __future__ import annotations

from typing import Any

import torch

from .. import _C

_initialized = False


def _lazy_init() -> None:
    """Initialise the runtime on first use; torch calls this before creating neuron tensors."""
    global _initialized
    if _initialized and not _C._is_in_bad_fork():
        return
    _C._init()  # raises a clear RuntimeError in a fork()ed child of an initialised parent
    _initialized = True


def init() -> None:
    _lazy_init()


def is_initialized() -> bool:
    return _C._is_initialized() and not _C._is_in_bad_fork()


def _is_in_bad_fork() -> bool:
    return _C._is_in_bad_fork()


def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def _device_index(device: Any, optional: bool = False) -> int:
    """The index named by an int, 'neuron:N', torch.device or None (the current device)."""
    if device is None:
        return -1 if optional else current_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "neuron":
            raise ValueError(f"expected a neuron device, got {device}")
        if device.index is None:
            return -1 if optional else current_device()
        return device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise TypeError(f"expected a device index, 'neuron:N' or torch.device, got {device!r}")


def current_device() -> int:
    return _C._current_device()


def set_device(device: Any) -> None:
    index = _device_index(device, optional=True)
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager selecting the current neuron device; restores the previous one on exit,
    also when the body raises. ``None`` or a negative index is a no-op."""

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *exc: object) -> bool:
        if self.idx >= 0:
            _C._set_device(self.prev_idx)
        return False


def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes torch.autocast(device_type="neuron") accepts (torch asks the device module)."""
    return [torch.bfloat16, torch.float16]


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on the device; raise an error a queued op left there."""
    torch.accelerator.synchronize(_device_index(device))


from .memory import *  # noqa: E402,F403
from .execution import *  # noqa: E402,F403
from .random import *  # noqa: E402,F403
from .streams import *  # noqa: E402,F403
from . import execution, memory, random, streams  # noqa: E402

__all__ = [
    "init",
    "is_initialized",
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "device",
    "synchronize",
    "get_amp_supported_dtype",
    *memory.__all__,
    *execution.__all__,
    *random.__all__,
    *streams.__all__,
]
