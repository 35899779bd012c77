"""The defects the modules suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how); opt-in (the ops suite's cases must not meet them). Never imported
by a real run."""

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


DEFECTS = {
    "shifted_layer_norm": Defect({"native_layer_norm": _shifted_layer_norm},
                                 "the normalized output shifted by 0.25 (mean and rstd right): nn.LayerNorm and "
                                 "every module built on it compute wrong values", "forward, noncontiguous",
                                 opt_in=True),
    "stale_running_stats": Defect({"native_batch_norm": _stale_running_stats_batch_norm},
                                  "right outputs, but the running statistics are updated in a CPU copy and never "
                                  "written back (a fallback that ignores unannotated writes)", "state", opt_in=True),
}
