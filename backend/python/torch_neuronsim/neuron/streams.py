"""Streams and events of the neuron device, on torch's generic torch.Stream / torch.Event.

Each stream's ops are queued and run later, in order, by the stream's own thread: ``query()`` is
False while work is queued, ``synchronize()`` waits for it (and raises an error a queued op
left), an event is a point in its stream that another stream can wait at, and its time is when
the stream reached it (``elapsed_time`` is the time between two such points).
"""

from __future__ import annotations

from typing import Any

from .. import _C
from . import _device_index

import torch

__all__ = ["Stream", "Event", "current_stream", "default_stream", "set_stream", "stream", "StreamContext"]


def _neuron_device(device: Any) -> torch.device:
    return torch.device("neuron", _device_index(device))


# torch's own Stream/Event types are returned (not subclasses): torch.Event.elapsed_time and
# friends accept exactly those types.
def Stream(device: Any = None, priority: int = 0) -> torch.Stream:
    """A new neuron stream. ``priority`` < 0 takes one from the high-priority pool."""
    return torch.Stream(device=_neuron_device(device), priority=priority)


def Event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> torch.Event:
    """A neuron event of the current device; ``enable_timing=True`` allows ``elapsed_time``."""
    return torch.Event(
        device=_neuron_device(None), enable_timing=enable_timing, blocking=blocking, interprocess=interprocess
    )


def current_stream(device: Any = None) -> torch.Stream:
    return torch.accelerator.current_stream(_neuron_device(device))


def default_stream(device: Any = None) -> torch.Stream:
    current = current_stream(device)
    return torch.Stream(stream_id=0, device_index=current.device_index, device_type=current.device_type)


def set_stream(s: torch.Stream) -> None:
    torch.accelerator.set_stream(s)


class StreamContext:
    """Makes ``s`` the current stream of its device inside the block, restoring the previous
    current stream (and device) afterwards. ``None`` is a no-op."""

    def __init__(self, s: torch.Stream | None) -> None:
        self.stream = s
        self.prev_stream: torch.Stream | None = None
        self.prev_device = -1

    def __enter__(self) -> torch.Stream | None:
        if self.stream is None:
            return None

        self.prev_device = _C._current_device()
        self.prev_stream = torch.accelerator.current_stream(self.stream.device)
        torch.accelerator.set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc: object) -> bool:
        if self.stream is not None and self.prev_stream is not None:

            torch.accelerator.set_stream(self.prev_stream)
            _C._set_device(self.prev_device)
        return False


def stream(s: torch.Stream | None) -> StreamContext:
    return StreamContext(s)
