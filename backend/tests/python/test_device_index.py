"""Selecting devices: set/get/exchange, the context manager, invalid indices."""

import threading

import pytest
import torch


def test_set_and_get():
    torch.neuron.set_device(1)
    assert torch.neuron.current_device() == 1
    assert torch.empty(1, device="neuron").device == torch.device("neuron", 1)
    torch.neuron.set_device("neuron:0")
    assert torch.neuron.current_device() == 0
    torch.neuron.set_device(torch.device("neuron", 1))
    assert torch.neuron.current_device() == 1


def test_exchange_through_accelerator_api():
    torch.accelerator.set_device_index(1)
    assert torch.neuron.current_device() == 1
    assert torch.accelerator.current_device_index() == 1


def test_context_manager_restores_and_nests():
    with torch.neuron.device(1):
        assert torch.neuron.current_device() == 1
        with torch.neuron.device(0):
            assert torch.neuron.current_device() == 0
        assert torch.neuron.current_device() == 1
    assert torch.neuron.current_device() == 0


def test_context_manager_restores_on_exception():
    with pytest.raises(KeyError):
        with torch.neuron.device(1):
            raise KeyError("boom")
    assert torch.neuron.current_device() == 0


def test_context_manager_none_is_noop():
    torch.neuron.set_device(1)
    with torch.neuron.device(None):
        assert torch.neuron.current_device() == 1
    assert torch.neuron.current_device() == 1


def test_current_device_is_per_thread():
    torch.neuron.set_device(1)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.neuron.current_device()))
    thread.start()
    thread.join()
    assert seen == [0]


@pytest.mark.parametrize("bad", [2, 7, 63])
def test_invalid_index_names_value_limit_and_remedy(bad):
    with pytest.raises(RuntimeError) as info:
        torch.neuron.set_device(bad)
    message = str(info.value)
    assert f"Invalid device index {bad}" in message
    assert "neuron:0 to neuron:1" in message
    assert "NEURONSIM_DEVICES" in message
    assert torch.neuron.current_device() == 0  # unchanged
    with pytest.raises(RuntimeError, match=f"Invalid device index {bad}"):
        torch.ones(2, device=f"neuron:{bad}")
    with pytest.raises(RuntimeError, match=f"Invalid device index {bad}"):
        with torch.neuron.device(bad):
            pass
    assert torch.ones(1, device="neuron").item() == 1.0  # still usable


def test_other_device_types_are_rejected():
    with pytest.raises(ValueError, match="expected a neuron device, got cpu"):
        torch.neuron.set_device("cpu")
