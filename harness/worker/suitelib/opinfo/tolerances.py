"""The tolerance an OpInfo's device results are compared with at a dtype (lookup()): upstream's
decorators for TestCommon.test_compare_cpu (info_decorators), then the project's reviewed
overrides in tolerances.json beside this file, which read() checks entry by entry: a wrong entry
would otherwise widen or narrow a tolerance unseen. And whether upstream compares the op's values
with the CPU at all (values_not_comparable()).

tolerances.json: {"description": ..., "overrides": {subject: {dtype: {"rtol": number, "atol":
number, "reason": "why"}}}}, an entry with a non-empty reason and rtol, atol or both.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch

from evidence import dtype_name
from suitelib import info_decorators, opinfo

OVERRIDES_FILE = Path(__file__).with_name("tolerances.json")
PROJECT_SOURCE = "harness/worker/suitelib/opinfo/tolerances.json"  # a tolerance reviewed here, with a reason
_FILE_FIELDS = {"description", "overrides"}
_ENTRY_FIELDS = {"rtol", "atol", "reason"}


def read(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """The overrides of a tolerances file, by subject and dtype name ({} without the file);
    ValueError naming the file and the entry where an entry is not a reviewed tolerance: no
    reason, a field it does not know, an rtol or atol that is not a finite number >= 0, neither,
    or a dtype torch does not have."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("overrides", {}), dict) or set(data) - _FILE_FIELDS:
        raise ValueError(f"{path}: expected an object with the fields {sorted(_FILE_FIELDS)}, the overrides an "
                         f"object by OpInfo subject")
    overrides = data.get("overrides", {})
    for subject, by_dtype in overrides.items():
        if not isinstance(by_dtype, dict):
            raise ValueError(f"{path}: entry {subject}: expected an object by dtype name")
        for dtype, entry in by_dtype.items():
            if (problem := _problem(dtype, entry)) is not None:
                raise ValueError(f"{path}: entry {subject}/{dtype}: {problem}")
    return overrides


def _problem(dtype: str, entry: Any) -> str | None:
    """What is wrong with one entry, or None."""
    if not isinstance(getattr(torch, dtype, None), torch.dtype) or dtype_name(getattr(torch, dtype)) != dtype:
        return f"{dtype!r} is no dtype as case ids name them (float32, bfloat16, ...)"
    if not isinstance(entry, dict):
        return "expected an object with rtol and/or atol and a reason"
    if unknown := sorted(set(entry) - _ENTRY_FIELDS):
        return f"unknown field(s) {unknown} (known: {sorted(_ENTRY_FIELDS)})"
    if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
        return "no reason: every override says why it is needed"
    if "rtol" not in entry and "atol" not in entry:
        return "neither rtol nor atol"
    for field in ("rtol", "atol"):
        value = entry.get(field, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            return f"{field} {value!r} is not a finite number >= 0"
    return None


OVERRIDES = read(OVERRIDES_FILE)


def lookup(op, dtype: torch.dtype) -> tuple[float, float, str]:
    """(rtol, atol, source) for comparing this op's device results at dtype."""
    rtol, atol, source = info_decorators.tolerance(_upstream_decorations(op, dtype), dtype, "OpInfo")
    project = OVERRIDES.get(opinfo.subject(op), {}).get(dtype_name(dtype))
    if project:
        rtol, atol = project.get("rtol", rtol), project.get("atol", atol)
        source = PROJECT_SOURCE
    return rtol, atol, source


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
