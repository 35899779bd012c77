"""torch.save / torch.load of neuron tensors, with map_location."""

import io

import pytest
import torch


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


@pytest.mark.parametrize(
    "map_location,expected",
    [(None, "neuron:1"), ("cpu", "cpu"), ("neuron", "neuron:0"), ("neuron:0", "neuron:0"),
     ("neuron:1", "neuron:1"), (torch.device("neuron", 0), "neuron:0")],
)
def test_tensor_roundtrip(map_location, expected):
    original = torch.randn(3, 4, device="neuron:1")
    kwargs = {} if map_location is None else {"map_location": map_location}
    loaded = roundtrip(original, **kwargs)
    assert str(loaded.device) == expected
    assert torch.equal(loaded.cpu(), original.cpu())


def test_views_keep_sharing_after_load():
    base = torch.arange(10.0, device="neuron")
    loaded_base, loaded_view = roundtrip([base, base[2:5]])
    loaded_view.fill_(-1)
    assert loaded_base[3].item() == -1


def test_module_state_dict():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3)).to("neuron")
    state = roundtrip(model.state_dict(), map_location="cpu")
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
    fresh.load_state_dict(state)
    x = torch.randn(2, 4)
    assert torch.allclose(fresh(x), model(x.to("neuron")).cpu())


def test_cpu_tensor_loaded_onto_device():
    loaded = roundtrip(torch.ones(3), map_location="neuron:1")
    assert loaded.device == torch.device("neuron", 1)


def test_invalid_map_location_is_clear():
    with pytest.raises(RuntimeError, match="neuron"):
        roundtrip(torch.ones(1, device="neuron"), map_location="neuron:9")
