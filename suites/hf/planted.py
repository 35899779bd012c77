"""The defects the hf suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one class of bug each, the kernel that has it, the check that
catches it. Never imported by a real run."""

from __future__ import annotations

from suitelib.planting import Defect


def _misses_inf_unscale_(tensors, found_inf, inv_scale):
    for t in tensors:
        host = t.cpu()
        if bool(host.isnan().any()):  # inf is not looked for
            found_inf.fill_(1.0)
        t.copy_((host * inv_scale.cpu()).to(t.device))


DEFECTS = {
    "misses_inf": Defect({"_amp_foreach_non_finite_check_and_unscale_": _misses_inf_unscale_},
                         "the GradScaler's unscale: divides, but finds only NaN, not inf, so a step whose "
                         "gradients overflowed is taken", "train_step at float16 (the scaler took a step its "
                         "gradients overflowed)", opt_in=True),
}
