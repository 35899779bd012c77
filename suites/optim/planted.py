"""The defect the optim suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how); opt-in (the ops suite's cases must not meet it). Never imported
by a real run."""

from __future__ import annotations

from suitelib.planting import Defect


def _far_lerp_(self, end, weight):
    return self.add_((end - self) * (2 * weight))


DEFECTS = {
    "far_lerp": Defect({"lerp_.Scalar": _far_lerp_},
                       "moves self twice as far towards `end`: Adam's and AdamW's update of the first moment "
                       "(exp_avg.lerp_(grad, 1 - beta1)) is wrong, for-loop and foreach", "step, load_state_dict",
                       opt_in=True),
}
