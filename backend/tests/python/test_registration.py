"""The backend registers itself as `neuron`, by autoload or by import."""

import torch

from device_helpers import run_python


def test_plain_import_torch_autoloads_the_backend():
    result = run_python(
        """
        import torch
        t = torch.ones(2, device="neuron")
        print(t.device, torch.neuron.device_count(), type(torch.neuron).__name__)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["neuron:0", "2", "module"]


def test_importing_the_package_first_works():
    result = run_python(
        """
        import torch_neuronsim
        import torch
        print(torch.ones(1, device="neuron").device, torch_neuronsim.__version__)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["neuron:0", "0.1.0"]


def test_autoload_can_be_turned_off():
    result = run_python(
        """
        import torch
        print(hasattr(torch, "neuron"))
        import torch_neuronsim
        print(torch.zeros(1, device="neuron").device)
        """,
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "neuron:0"]


def test_privateuse1_is_renamed():
    assert torch._C._get_privateuse1_backend_name() == "neuron"
    assert torch.device("neuron:1").type == "neuron"
    assert torch.accelerator.current_accelerator() == torch.device("neuron")


def test_tensor_and_storage_methods():
    cpu = torch.arange(4.0)
    dev = cpu.neuron()
    assert dev.is_neuron and not cpu.is_neuron
    assert dev.device == torch.device("neuron", 0)
    assert cpu.neuron(1).device == torch.device("neuron", 1)
    storage = cpu.untyped_storage().neuron()
    assert storage.is_neuron
    assert storage.device == torch.device("neuron", 0)
    assert dev.untyped_storage().is_neuron


def test_device_module_api_is_complete():
    for name in [
        "is_available", "device_count", "current_device", "set_device", "device", "synchronize",
        "manual_seed", "manual_seed_all", "seed", "initial_seed", "get_rng_state", "set_rng_state",
        "memory_allocated", "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats",
        "memory_stats", "empty_cache", "Stream", "Event", "current_stream", "stream",
    ]:
        assert callable(getattr(torch.neuron, name)), name
    assert torch.neuron.is_available()


def test_malformed_environment_is_named():
    for env, needle in [
        ({"NEURONSIM_DEVICES": "abc"}, "NEURONSIM_DEVICES='abc'"),
        ({"NEURONSIM_DEVICE_MEMORY": "lots"}, "NEURONSIM_DEVICE_MEMORY='lots'"),
        ({"NEURONSIM_DEVICEZ": "2"}, "unknown environment variable NEURONSIM_DEVICEZ"),
    ]:
        result = run_python("import torch", **env)
        assert result.returncode != 0
        assert needle in result.stderr, result.stderr
        assert "Segmentation" not in result.stderr


def test_device_count_follows_environment():
    result = run_python(
        """
        import torch
        print(torch.neuron.device_count(), torch.ones(1, device="neuron:3").device)
        """,
        NEURONSIM_DEVICES="4",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4", "neuron:3"]
