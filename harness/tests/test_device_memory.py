"""harness/worker/device_memory.py: reading the device memory a case left behind only once what
still holds it for a moment (reference cycles, the device's autograd thread) has let go."""

from __future__ import annotations

import sys
import threading
import time

import torch
import torch_neuronsim  # noqa: F401 - the bundled backend: a device with its own autograd thread

from conform_cli import REPO

sys.path.insert(0, str(REPO / "harness" / "worker"))
from device_memory import allocated_reader  # noqa: E402

DEVICE = torch._C._get_privateuse1_backend_name()


class _SlowBackward(torch.autograd.Function):
    """Its backward runs on the device's autograd thread (its gradient is on the device) and takes
    a while there: meanwhile, that thread holds what it is working on."""

    started = threading.Event()
    finished = threading.Event()

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        _SlowBackward.started.set()
        time.sleep(0.3)
        _SlowBackward.finished.set()
        return grad


def test_settled_memory_is_read_after_the_devices_autograd_thread_is_done():
    """The thread that runs a device's backward lets go of its graph task after the caller has its
    gradients: a reading taken at once may count memory that is about to be freed (a false leak,
    and a second run of the case). settled() reads only once that thread has finished what it had
    in hand."""
    memory = allocated_reader(DEVICE)
    assert memory is not None
    x = torch.ones(256, device=DEVICE, requires_grad=True)
    backward = threading.Thread(target=lambda: torch.autograd.grad(_SlowBackward.apply(x).sum(), x))
    backward.start()
    try:
        assert _SlowBackward.started.wait(10)
        memory.settled(generation=1)
        assert _SlowBackward.finished.is_set()
    finally:
        backward.join()


def test_a_device_without_autograd_is_read_as_it_is():
    """Where the wait itself cannot run (here: a device index the backend does not have), the
    reading is taken without it, and the wait is not tried again."""
    reads = []
    memory = type(allocated_reader(DEVICE))(f"{DEVICE}:63", lambda: reads.append(1) or 7)
    assert memory.settled() == 7 and memory.settled(generation=1) == 7
    assert len(reads) == 2 and memory._autograd_waitable is False
