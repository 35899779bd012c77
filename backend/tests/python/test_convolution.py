"""Convolution on the device: PyTorch hands every convolution of a backend without its own
convolution kernel to convolution_overrideable and convolution_backward_overrideable; the engine
runs both natively. A Conv2d + BatchNorm2d + ReLU block trains with no fallback and matches the
CPU. Also the ops the model-impact ranking put next (sort, topk, isin, histc)."""

import copy

import pytest
import torch
import torch.nn.functional as F
import torch_neuronsim as ns
from torch import nn

CONVOLUTIONS = {
    "conv1d": (nn.Conv1d(4, 6, 3, padding=1), (2, 4, 9)),
    "conv2d_groups_dilation": (nn.Conv2d(4, 8, 3, groups=2, dilation=2, padding=2), (2, 4, 9, 9)),
    "conv2d_stride_reflect": (nn.Conv2d(3, 5, 3, stride=2, padding=1, padding_mode="reflect"), (1, 3, 8, 7)),
    "conv2d_replicate": (nn.Conv2d(3, 5, 3, padding=1, padding_mode="replicate"), (1, 3, 6, 6)),
    "conv1d_circular": (nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular"), (2, 2, 7)),
    "conv2d_no_bias": (nn.Conv2d(3, 4, 1, bias=False), (2, 3, 5, 5)),
    "conv3d": (nn.Conv3d(2, 3, 2), (1, 2, 4, 4, 4)),
    "conv_transpose1d": (nn.ConvTranspose1d(4, 3, 3, stride=2, output_padding=1), (2, 4, 6)),
    "conv_transpose2d_groups": (nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, padding=1), (1, 4, 5, 5)),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolutions_run_natively_forward_and_backward(name):
    torch.manual_seed(0)
    cpu_module, shape = CONVOLUTIONS[name]
    x = torch.randn(shape, requires_grad=True)
    dev_module = copy.deepcopy(cpu_module).to("neuron")
    dx = x.detach().to("neuron").requires_grad_()

    ns.clear_op_tracking()
    out = dev_module(dx)
    grad = torch.randn(out.shape)
    out.backward(grad.to("neuron"))
    assert ns.get_fallback_ops() == {}, "ops fell back to the CPU"
    executed = ns.get_executed_ops()
    assert executed["aten::convolution_overrideable"] >= 1
    assert executed["aten::convolution_backward_overrideable"] >= 1

    expected = cpu_module(x)
    expected.backward(grad)
    torch.testing.assert_close(out.cpu(), expected)
    torch.testing.assert_close(dx.grad.cpu(), x.grad)
    assert_gradients_match(cpu_module, dev_module)


def assert_gradients_match(cpu_module: nn.Module, dev_module: nn.Module) -> None:
    """Every parameter's gradient is on the device and equals the CPU module's."""
    for (name, p), d in zip(cpu_module.named_parameters(), dev_module.parameters()):
        assert d.grad.device.type == "neuron", name
        torch.testing.assert_close(d.grad.cpu(), p.grad, msg=name)


def test_bfloat16_convolution_follows_the_cpu():
    torch.manual_seed(0)
    x, w = torch.randn(2, 3, 6, 6, dtype=torch.bfloat16), torch.randn(4, 3, 3, 3, dtype=torch.bfloat16)
    torch.testing.assert_close(F.conv2d(x.to("neuron"), w.to("neuron")).cpu(), F.conv2d(x, w))


def test_bad_convolution_arguments_get_the_cpus_error():
    x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3)  # 3 input channels, weight wants 2
    with pytest.raises(RuntimeError) as on_cpu:
        F.conv2d(x, w)
    with pytest.raises(RuntimeError) as on_device:
        F.conv2d(x.to("neuron"), w.to("neuron"))
    assert str(on_cpu.value).splitlines()[0] in str(on_device.value)


class ConvBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.relu(self.norm(self.conv(x))).mean((2, 3)))


def test_conv_batchnorm_relu_block_trains_natively_and_matches_cpu():
    torch.manual_seed(0)
    cpu_model, dev_model = ConvBlock(), ConvBlock()
    dev_model.load_state_dict(cpu_model.state_dict())
    dev_model.to("neuron")
    x, target = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))

    ns.clear_op_tracking()
    loss = F.cross_entropy(dev_model(x.to("neuron")), target.to("neuron"))
    loss.backward()
    assert ns.get_fallback_ops() == {}, "ops fell back to the CPU"
    assert ns.get_executed_ops()["aten::native_batch_norm"] >= 1

    cpu_loss = F.cross_entropy(cpu_model(x), target)
    cpu_loss.backward()
    torch.testing.assert_close(loss.cpu(), cpu_loss)
    assert_gradients_match(cpu_model, dev_model)
    # training-mode batch norm updates its running statistics in device memory
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(dev_model.norm, name).cpu(), getattr(cpu_model.norm, name), msg=name)


def test_sort_topk_isin_histc_run_natively():
    torch.manual_seed(0)
    x = torch.randn(5, 7)
    d = x.to("neuron")
    ns.clear_op_tracking()
    values, indices = torch.sort(d, dim=1, stable=True)
    torch.testing.assert_close(values.cpu(), torch.sort(x, dim=1, stable=True).values)
    assert torch.equal(indices.cpu(), torch.sort(x, dim=1, stable=True).indices)
    top = torch.topk(d, 3)
    torch.testing.assert_close(top.values.cpu(), torch.topk(x, 3).values)
    ids = torch.tensor([1, 2, 3, 7])
    assert torch.equal(torch.isin(ids.to("neuron"), torch.tensor([2, 7], device="neuron")).cpu(),
                       torch.isin(ids, torch.tensor([2, 7])))
    torch.testing.assert_close(torch.histc(d, bins=4, min=-2, max=2).cpu(), torch.histc(x, bins=4, min=-2, max=2))
    expert_ids = torch.tensor([[0, 3], [3, 1], [2, 3]], dtype=torch.int32)  # MoE routing counts experts
    counts = torch.histc(expert_ids.to("neuron"), bins=4, min=0, max=3)
    assert counts.dtype == torch.int32 and counts.cpu().tolist() == [1, 1, 1, 3]
    assert ns.get_fallback_ops() == {}
    executed = ns.get_executed_ops()
    for op in ["aten::sort.stable", "aten::topk", "aten::isin.Tensor_Tensor", "aten::histc"]:
        assert executed.get(op, 0) >= 1, op


def test_float64_running_statistics_are_written_back_from_the_downcast_copy():
    # NEURONSIM_64BIT=downcast runs native_batch_norm on a float32 copy of the float64 running
    # statistics, which the schema does not mark as written: the engine must copy them back.
    torch.manual_seed(0)
    cpu_norm = nn.BatchNorm1d(4).double()
    dev_norm = nn.BatchNorm1d(4).double().to("neuron")
    x = torch.randn(8, 4, dtype=torch.float64)
    cpu_norm(x)
    dev_norm(x.to("neuron"))
    for name in ("running_mean", "running_var"):
        torch.testing.assert_close(getattr(dev_norm, name).cpu(), getattr(cpu_norm, name), rtol=1e-5, atol=1e-6,
                                   msg=name)
        assert not torch.equal(getattr(dev_norm, name).cpu(), getattr(nn.BatchNorm1d(4).double(), name)), name
