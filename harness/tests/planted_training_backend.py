"""A test-only backend for the modules and optim suites: torch_neuronsim with three planted faults.

  aten::native_layer_norm  the normalized output shifted by 0.25 (mean and rstd right): nn.LayerNorm
                           and every module built on it (Transformer layers) compute wrong values
  aten::lerp_.Scalar       moves self twice as far towards `end`: Adam's and AdamW's update of the
                           first moment (exp_avg.lerp_(grad, 1 - beta1)) is wrong, in the for-loop
                           path and in the foreach path, which torch_neuronsim runs tensor by tensor
  aten::native_batch_norm  right outputs, but the running statistics are updated in a CPU copy and
                           never written back (what a CPU fallback that ignores unannotated writes
                           does): a BatchNorm's buffers keep their initial values
Everything else is torch_neuronsim, including its op tracking API.
"""

import torch
import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops  # noqa: F401

__version__ = torch_neuronsim.__version__ + "+planted-training"

_lib = torch.library.Library("aten", "IMPL")


def _shifted_layer_norm(input, normalized_shape, weight, bias, eps):
    out, mean, rstd = torch.ops.aten.native_layer_norm.default(input.cpu(), normalized_shape,
                                                               None if weight is None else weight.cpu(),
                                                               None if bias is None else bias.cpu(), eps)
    return (out + 0.25).to(input.device), mean.to(input.device), rstd.to(input.device)


def _far_lerp_(self, end, weight):
    return self.add_((end - self) * (2 * weight))


def _stale_running_stats_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    def cpu(t):
        return None if t is None else t.cpu()
    out, mean, invstd = torch.ops.aten.native_batch_norm.default(
        input.cpu(), cpu(weight), cpu(bias), cpu(running_mean), cpu(running_var), training, momentum, eps)
    return out.to(input.device), mean.to(input.device), invstd.to(input.device)


_lib.impl("native_layer_norm", _shifted_layer_norm, "PrivateUse1")
_lib.impl("native_batch_norm", _stale_running_stats_batch_norm, "PrivateUse1")
_lib.impl("lerp_.Scalar", _far_lerp_, "PrivateUse1")
