"""The tolerance an OpInfo's device results are compared with at a dtype (lookup()): upstream's
decorators for TestCommon.test_compare_cpu (info_decorators), then the reviewed tolerance the
harness gave with the case: a skip list's tolerance entry (its reason and torch range checked,
linted and found stale as every entry is; README.md, Skip lists). And whether upstream compares the op's values with the CPU at all
(values_not_comparable()).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from suitelib import info_decorators


class Tolerance(NamedTuple):
    rtol: float
    atol: float
    source: str  # upstream's ("OpInfo", "torch.testing default"), or the tolerance entry's file:line
    reviewed: bool  # a skip list's entry: a reviewed tolerance, which passes a low-precision result too


def lookup(op, dtype: torch.dtype, reviewed: dict[str, Any] | None = None) -> Tolerance:
    """The tolerance for comparing this op's device results at dtype: `reviewed` (the case's
    tolerance entry, Context.reviewed_tolerance()) where it gives rtol or atol, else upstream's."""
    rtol, atol, source = info_decorators.tolerance(_upstream_decorations(op, dtype), dtype, "OpInfo")
    if reviewed is None:
        return Tolerance(rtol, atol, source, False)
    return Tolerance(reviewed.get("rtol", rtol), reviewed.get("atol", atol), reviewed["entry"], True)


def _upstream_decorations(op, dtype: torch.dtype):
    """The decorators OpInfo applies to TestCommon.test_compare_cpu at `dtype` on any device."""
    return info_decorators.decorations(op, dtype, "TestCommon", ["test_compare_cpu"])


def values_not_comparable(op, dtype: torch.dtype) -> str | None:
    """Upstream's reason when it skips comparing this op's values with the CPU, else None. It does
    not excuse the device (upstream skips for slow tests and flakes as well as for random outputs):
    it only makes the case ask the CPU first whether it reproduces its own result
    (Sides.values_suspect); the ops suite's random check selects ops by it."""
    for decorator, _ in _upstream_decorations(op, dtype):
        probe = decorator(lambda: None) if callable(decorator) else None
        if getattr(probe, "__unittest_skip__", False):
            return str(getattr(probe, "__unittest_skip_why__", "")) or "skipped upstream"
    return None
