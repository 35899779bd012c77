"""torch.autocast(device_type="neuron"): the policy the backend registers and declares."""

import pytest
import torch
import torch_neuronsim


def test_the_declared_policy_is_the_registered_one():
    policy = torch_neuronsim.autocast_policy()
    assert policy["dtype"] == torch.bfloat16 and policy["supported_dtypes"] == [torch.bfloat16, torch.float16]
    declared = {name for kind, names in policy.items() if kind not in ("dtype", "supported_dtypes") for name in names}
    registered = {name for name in torch._C._dispatch_get_all_op_names()
                  if torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastPrivateUse1")}
    assert declared == registered
    assert {"aten::mm", "aten::conv2d", "aten::linear"} <= set(policy["lower_precision_fp"])
    assert {"aten::softmax.int", "aten::sum"} <= set(policy["fp32_set_opt_dtype"])
    assert "aten::layer_norm" in policy["fp32"]


def test_autocast_casts_as_the_policy_says():
    a = torch.randn(8, 8, device="neuron")
    with torch.autocast(device_type="neuron"):
        assert torch.get_autocast_dtype("neuron") == torch.bfloat16
        assert (a @ a).dtype == torch.bfloat16
        assert torch.nn.functional.linear(a, a).dtype == torch.bfloat16
        assert torch.softmax(a.bfloat16(), 0).dtype == torch.float32
        assert (a + a).dtype == torch.float32  # not in a list: as without autocast
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            torch.nn.functional.binary_cross_entropy(a.sigmoid(), a.sigmoid())
    with torch.autocast(device_type="neuron", dtype=torch.float16):
        assert (a @ a).dtype == torch.float16
    assert (a @ a).dtype == torch.float32
    cpu = a.cpu()
    torch.testing.assert_close((a.bfloat16() @ a.bfloat16()).cpu(), cpu.bfloat16() @ cpu.bfloat16())
