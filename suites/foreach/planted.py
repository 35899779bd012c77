"""The defects the foreach suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one class of bug each, the kernel that has it, the check that
catches it. Never imported by a real run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect


FOREACH_CHUNK = 32


def _stops_early_foreach_add(tensors, others, *, alpha=1):
    done = [torch.add(t.cpu(), o.cpu(), alpha=alpha).to(t.device) for t, o in zip(tensors[:FOREACH_CHUNK], others)]
    return done + [t.clone() for t in tensors[FOREACH_CHUNK:]]  # the rest: never computed


def _stops_early_foreach_add_(tensors, others, *, alpha=1):
    for t, o in zip(tensors[:FOREACH_CHUNK], others):
        t.copy_(torch.add(t.cpu(), o.cpu(), alpha=alpha).to(t.device))


DEFECTS = {
    "stops_early": Defect({"_foreach_add.List": _stops_early_foreach_add,
                           "_foreach_add_.List": _stops_early_foreach_add_},
                          "processes the first 32 tensors of the list and leaves the rest as they were (a chunk "
                          "loop that drops the last)", "outplace, inplace (length 33)"),
}
