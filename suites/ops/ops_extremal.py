"""The `extremal` check (floating dtypes): the sample inputs with NaN, +inf, -inf and -0.0 planted in
every floating-point tensor input, and large magnitudes for elementwise ops defined for them; NaN
positions must match exactly and infinities by sign.
"""

from __future__ import annotations

import math
from typing import Iterator

import torch
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, SampleInput, UnaryUfuncInfo

import suite_api
from dispatch_capture import made_uncounted
from sides import NoReference

from suitelib.opinfo import calls, judge, samples

DESCRIPTION = ("NaN, +inf, -inf and -0.0 (and large magnitudes for elementwise ops) planted in the inputs; "
               "NaN positions and infinities' signs must match the CPU's")


def applies(op, dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def _is_elementwise(op) -> bool:
    return isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo))


def _large(dtype: torch.dtype) -> float:
    """Upstream's largest "large value" for the dtype (generate_elementwise_binary_large_value_tensors)."""
    return 13437.7 if dtype == torch.float16 else 1e20


@made_uncounted
def planted(op, sample, index: int) -> Iterator[tuple[str, SampleInput]]:
    """The extremal variants of a sample: every strided floating-point tensor input with special values at
    every third element (in logical order). "nan": NaN there. "inf": +inf and -inf alternating
    there (which sign comes first alternates between samples), -0.0 at the elements after them.
    "large": large magnitudes of alternating sign, for elementwise ops defined for them
    (upstream's handles_large_floats). Samples without a floating-point tensor have none."""
    if not any(t.layout == torch.strided and t.dtype.is_floating_point and t.numel() for t in samples.tensors(sample)):
        return
    sign = 1.0 if index % 2 == 0 else -1.0
    kinds = [("nan", (math.nan, math.nan), None), ("inf", (sign * math.inf, -sign * math.inf), -0.0)]
    if _is_elementwise(op) and getattr(op, "handles_large_floats", True):
        kinds.append(("large", None, None))
    for kind, pair, after in kinds:
        def plant(t, pair=pair, after=after):
            if not isinstance(t, torch.Tensor) or t.layout != torch.strided or not t.dtype.is_floating_point \
                    or not t.numel():
                return t
            big = _large(t.dtype)
            a, b = pair if pair is not None else (sign * big, -sign * big)
            flat = t.detach().reshape(-1).clone()
            flat[0::6] = a
            flat[3::6] = b
            if after is not None:
                flat[1::3] = after
            result = t.detach().clone()
            result.copy_(flat.view(t.shape))
            return result.requires_grad_(t.requires_grad)
        yield kind, sample.transform(plant)


def _check_extremal(case: judge.Case, inputs: list) -> None:
    run = calls.observed(lambda s: calls.forward(case.op, s))
    planted_any = 0
    for index, sample in enumerate(inputs):
        for kind, variant in planted(case.op, sample, index):
            planted_any += 1
            try:
                expected = case.cpu(run, variant)
            except NoReference:
                case.without_reference += 1
                continue
            case.judge(run, index, [(kind, variant)], variant, expected)
            case.compared += 1
    case.evidence["samples_planted"] = planted_any
    if not planted_any:  # e.g. factory functions: nothing to plant special values in
        case.vacuous = "no sample input has a floating-point tensor to plant special values in"


@suite_api.check("extremal", DESCRIPTION, applies=applies)
def run(case: judge.Case) -> None:
    _check_extremal(case, samples.generated(case.op, case.dtype, reference=False))
