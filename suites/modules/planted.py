"""The defects the modules suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how); opt-in (the ops suite's cases must not meet them). save_load's
(copies_per_tensor) is a patch of torch.Tensor's pickling, not a kernel. Never imported by a real
run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect, on_cpu


def _shifted_layer_norm(input, normalized_shape, weight, bias, eps):
    out, mean, rstd = torch.ops.aten.native_layer_norm.default(input.cpu(), normalized_shape, on_cpu(weight),
                                                               on_cpu(bias), eps)
    return (out + 0.25).to(input.device), mean.to(input.device), rstd.to(input.device)


def _stale_running_stats_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out, mean, invstd = torch.ops.aten.native_batch_norm.default(
        input.cpu(), on_cpu(weight), on_cpu(bias), on_cpu(running_mean), on_cpu(running_var), training, momentum,
        eps)
    return out.to(input.device), mean.to(input.device), invstd.to(input.device)


_reduce_ex_internal = torch.Tensor._reduce_ex_internal


def _copies_per_tensor(self, proto):
    if self.device.type == "cpu":
        return _reduce_ex_internal(self, proto)
    return (torch._utils._rebuild_device_tensor_from_cpu_tensor,  # no storage: a copy of this tensor alone
            (self.cpu(), self.dtype, str(self.device), self.requires_grad))


DEFECTS = {
    "shifted_layer_norm": Defect({"native_layer_norm": _shifted_layer_norm},
                                 "the normalized output shifted by 0.25 (mean and rstd right): nn.LayerNorm and "
                                 "every module built on it compute wrong values", "forward, noncontiguous",
                                 opt_in=True),
    "stale_running_stats": Defect({"native_batch_norm": _stale_running_stats_batch_norm},
                                  "right outputs, but the running statistics are updated in a CPU copy and never "
                                  "written back (a fallback that ignores unannotated writes)", "state", opt_in=True),
    "copies_per_tensor": Defect({}, "torch.save of device tensors (Tensor._reduce_ex_internal) saves each device "
                                "tensor as a CPU copy of itself (torch's path for a backend without storages): "
                                "views lose their offset, strides and storage sharing",
                                "save_load (strides, storage offset, sharing)", opt_in=True,
                                patches={(torch.Tensor, "_reduce_ex_internal"): _copies_per_tensor}),
}
