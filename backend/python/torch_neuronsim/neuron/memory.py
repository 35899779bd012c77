"""Device memory statistics, served by the runtime's DeviceAllocator through torch.accelerator."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch

from . import _device_index

__all__ = [
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
    "empty_cache",
    "mem_get_info",
]


def memory_stats(device: Any = None) -> OrderedDict[str, Any]:
    """Allocator statistics of a device, with the keys of torch.cuda.memory_stats."""
    return torch.accelerator.memory_stats(_device_index(device))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on the device (block sizes, rounded as allocated)."""
    return torch.accelerator.memory_allocated(_device_index(device))


def max_memory_allocated(device: Any = None) -> int:
    return torch.accelerator.max_memory_allocated(_device_index(device))


def memory_reserved(device: Any = None) -> int:
    """Bytes reserved by the allocator: in use plus cached for reuse."""
    return torch.accelerator.memory_reserved(_device_index(device))


def max_memory_reserved(device: Any = None) -> int:
    return torch.accelerator.max_memory_reserved(_device_index(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    torch.accelerator.reset_peak_memory_stats(_device_index(device))


def reset_accumulated_memory_stats(device: Any = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_device_index(device))


def empty_cache() -> None:
    """Return cached, unused blocks of every device to the system."""
    torch.accelerator.empty_cache()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the device's capacity (NEURONSIM_DEVICE_MEMORY)."""
    return torch.accelerator.get_memory_info(_device_index(device))
