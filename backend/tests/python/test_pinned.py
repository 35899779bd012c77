"""Pinned host memory."""

import torch


def test_pin_memory():
    cpu = torch.randn(128)
    assert not cpu.is_pinned()
    pinned = cpu.pin_memory()
    assert pinned.is_pinned()
    assert pinned.device.type == "cpu"
    assert torch.equal(pinned, cpu)
    assert pinned[10:].is_pinned()  # a view into a pinned block
    assert torch.empty(4, pin_memory=True).is_pinned()


def test_pinned_round_trip():
    pinned = torch.arange(64.0).pin_memory()
    dev = pinned.to("neuron", non_blocking=True)
    out = torch.empty(64, pin_memory=True)
    out.copy_(dev, non_blocking=True)
    torch.neuron.synchronize()
    assert torch.equal(out, pinned)


def test_device_tensors_cannot_be_pinned_at_creation():
    import pytest

    with pytest.raises(RuntimeError, match="pin_memory=True applies to CPU tensors only"):
        torch.empty(2, device="neuron", pin_memory=True)
