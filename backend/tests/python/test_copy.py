"""Copies of every kind, views sharing storage, and .item() for every dtype."""

import pytest
import torch

ALL_DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
    torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64, torch.complex128,
]


def sample(dtype: torch.dtype, shape=(3, 4, 5)) -> torch.Tensor:
    values = torch.arange(int(torch.tensor(shape).prod())).reshape(shape) % 7 - 3
    return values.to(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_host_to_device_to_host(dtype):
    cpu = sample(dtype)
    dev = cpu.to("neuron")
    assert dev.device.type == "neuron" and dev.dtype == dtype
    assert torch.equal(dev.cpu(), cpu)


@pytest.mark.parametrize("non_blocking", [False, True])
def test_across_devices(non_blocking):
    cpu = torch.randn(6, 7)
    on0 = cpu.to("neuron:0")
    on1 = on0.to("neuron:1", non_blocking=non_blocking)
    assert on1.device == torch.device("neuron", 1)
    torch.neuron.synchronize()
    assert torch.equal(on1.cpu(), cpu)
    back = torch.empty(6, 7, device="neuron:0")
    back.copy_(on1)
    assert torch.equal(back.cpu(), cpu)


def test_non_contiguous_and_offset():
    cpu = torch.randn(4, 5, 6)
    dev = cpu.to("neuron")
    cases = [
        lambda t: t.transpose(0, 2),
        lambda t: t[:, ::2, 1:],
        lambda t: t.select(1, 3),
        lambda t: t.narrow(2, 2, 3).permute(2, 0, 1),
        lambda t: t.expand(2, 4, 5, 6) if t.dim() == 3 else t,
    ]
    for view in cases:
        assert torch.equal(view(dev).cpu(), view(cpu))
        assert torch.equal(view(dev).contiguous().cpu(), view(cpu).contiguous())
    # host source with an offset into a non-contiguous device destination
    dst = torch.zeros(6, 5, device="neuron").t()
    dst.copy_(cpu[2, :, :])
    assert torch.equal(dst.cpu(), cpu[2])
    assert cpu[1:, 2].storage_offset() > 0
    assert torch.equal(cpu[1:, 2].to("neuron").cpu(), cpu[1:, 2])


@pytest.mark.parametrize("src", [torch.float64, torch.int64, torch.bfloat16, torch.bool], ids=str)
@pytest.mark.parametrize("dst", [torch.float32, torch.float16, torch.int32, torch.uint8], ids=str)
def test_dtype_converting(src, dst):
    cpu = sample(torch.int64).abs().to(src)
    assert torch.equal(cpu.to("neuron", dtype=dst).cpu(), cpu.to(dst))
    on_device = cpu.to("neuron")
    assert torch.equal(on_device.to(dst).cpu(), cpu.to(dst))
    assert torch.equal(on_device.to("cpu", dtype=dst), cpu.to(dst))


def test_non_blocking_host_to_device():
    cpu = torch.randn(1000).pin_memory()
    dev = cpu.to("neuron", non_blocking=True)
    torch.neuron.synchronize()
    assert torch.equal(dev.cpu(), cpu)


def test_views_share_storage():
    dev = torch.zeros(4, 4, device="neuron")
    row = dev.view(16)[4:8]
    row.fill_(7)
    assert dev[1].sum().item() == 28
    assert row.untyped_storage().data_ptr() == dev.untyped_storage().data_ptr()
    strided = torch.as_strided(dev, (2, 2), (8, 1), 1)
    strided.fill_(1)
    expected = torch.zeros(4, 4)
    expected[1] = 7
    torch.as_strided(expected, (2, 2), (8, 1), 1).fill_(1)
    assert torch.equal(dev.cpu(), expected)
    reshaped = dev.reshape(2, 8)
    assert reshaped._base is dev or reshaped.data_ptr() == dev.data_ptr()


def test_set_shares_storage():
    source = torch.arange(6.0, device="neuron")
    target = torch.empty(0, device="neuron")
    target.set_(source)
    assert target.data_ptr() == source.data_ptr()
    target[0] = 42
    assert source[0].item() == 42
    other = torch.empty(0, device="neuron")
    other.set_(source.untyped_storage(), 2, (2, 2), (2, 1))
    assert torch.equal(other.cpu(), torch.tensor([[2.0, 3.0], [4.0, 5.0]]))
    empty = torch.ones(3, device="neuron")
    empty.set_()
    assert empty.numel() == 0 and empty.device.type == "neuron"


def test_storage_resize_keeps_data():
    t = torch.arange(4.0, device="neuron")
    storage = t.untyped_storage()
    storage.resize_(64)
    assert storage.nbytes() == 64 and storage.device.type == "neuron"
    assert torch.equal(torch.tensor([], device="neuron").set_(storage, 0, (4,), (1,)).cpu(), torch.arange(4.0))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_item_every_dtype(dtype):
    value = {torch.bool: True, torch.complex64: 1 + 2j, torch.complex128: -3 + 0.5j}.get(dtype, 3)
    t = torch.tensor([value], dtype=dtype).to("neuron")
    assert t.item() == torch.tensor([value], dtype=dtype).item()
    assert t.view(()).item() == t.item()


def test_lazy_conjugate_and_negative_views_copy_correctly():
    # Regression: copying a conj view off the device recursed until the stack overflowed.
    z = torch.tensor([1 + 2j, -3 - 4j], dtype=torch.complex64)
    conj = torch.conj(z.to("neuron"))
    assert conj.is_conj()
    assert torch.equal(conj.cpu(), torch.conj(z).resolve_conj())
    neg = torch._neg_view(z.to("neuron"))
    assert torch.equal(neg.cpu(), -z)
    back = torch.empty(2, dtype=torch.complex64, device="neuron")
    back.copy_(torch.conj(z))
    assert torch.equal(back.cpu(), torch.conj(z).resolve_conj())
