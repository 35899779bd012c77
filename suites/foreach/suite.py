"""The foreach suite: upstream's _foreach_* OpInfos (foreach_unary_op_db, foreach_binary_op_db,
foreach_pointwise_op_db, foreach_reduce_op_db, foreach_other_op_db), which op_db (and so the ops
suite) does not hold, at the list lengths optimizers call them with: an optimizer applies one
_foreach_* call to every parameter of a model, hundreds of tensors, where a backend's kernel may
process the list in chunks (and drop the last one) or stop after the first tensors.

Case ids: foreach/<OpInfo>/<dtype>/<check>, at float32 and bfloat16 where the op supports them on
the CPU (the dtypes optimizers step in; the ops suite covers dtypes per op).
Checks:
  outplace  the op at each length of LENGTHS (upstream's own sample at that length: tensors of
            decreasing square shapes, 0-dim to n x n, with its scalar, scalar-list or tensor-list
            arguments), as generated and with every tensor non-contiguous, against the CPU's
            result for each tensor of the list; an empty list, which the CPU refuses, refused
  inplace   the in-place variant (_foreach_add_ ...) likewise: every tensor of the list written,
            as the CPU writes it (OpInfos with one)
Evidence: `lengths` (the lengths run), and a failure's variant names the length
(`length 130`, `length 130 noncontiguous`) and `first_wrong_tensor`, the index of the list's first
tensor that differs.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch
from torch.testing._internal import common_utils

import suite_api
from comparison import Mismatch, compare
from evidence import dtype_name
from sides import NoReference, Verdict

from suitelib import opinfo
from suitelib.opinfo import judge, sample_variants, samples

opinfo.foreach_by_subject()  # op_db imported with the suite: the zygote forks its workers with it

LENGTHS = (1, 3, 33, 130)  # one tensor, a few, past a chunk of 32, past a chunk of 128
DTYPES = (torch.float32, torch.bfloat16)

SUITE = suite_api.Suite(__name__, noun="foreach OpInfo", nouns="foreach OpInfos",
                        native_phrase="run natively at every list length")
SUITE.makes_cases(judge.cases(opinfo.foreach_by_subject, "foreach OpInfo"))


def _dtypes(op) -> list[torch.dtype]:
    return [d for d in DTYPES if d in op.supported_dtypes("cpu")]


@suite_api.check("outplace", "the op over lists of 1 to 130 tensors, contiguous and not, against the CPU per "
                 "tensor; an empty list refused as the CPU refuses it")
def outplace(case: judge.Case) -> None:
    _over_lengths(case, lambda s: case.op(s.input, *s.args, **s.kwargs))


@suite_api.check("inplace", "the in-place variant over lists of 1 to 130 tensors: every tensor written as the CPU "
                 "writes it", applies=lambda op, dtype: op.inplace_variant is not None)
def inplace(case: judge.Case) -> None:
    def run(s):
        case.op.inplace_variant(s.input, *s.args, **s.kwargs)
        return s.input
    _over_lengths(case, run)


def _sample(op, dtype: torch.dtype, length: int):
    """Upstream's first sample of `length` tensors, seeded as upstream seeds a test's samples."""
    torch.manual_seed(common_utils.SEED)
    return next(iter(op.sample_inputs("cpu", dtype, num_input_tensors=[length])), None)


def _first_wrong(actual: Any, expected: Any, case: judge.Case) -> int | None:
    """The index of the first tensor of the result list that differs from the CPU's."""
    if not isinstance(actual, (list, tuple)) or not isinstance(expected, (list, tuple)):
        return None
    for index, (a, e) in enumerate(zip(actual, expected)):
        try:
            compare(a, e, case.rtol, case.atol)
        except Mismatch:
            return index
    return None


def _over_lengths(case: judge.Case, run) -> None:
    ran: list[int] = []
    for length in LENGTHS:
        sample = _sample(case.op, case.dtype, length)
        if sample is None:
            continue
        try:
            expected = case.cpu(run, sample)
        except NoReference:
            case.without_reference += 1
            continue
        variants = [(f"length {length}", sample)]
        if (nc := samples.noncontiguous(sample)) is not None:
            variants.append((f"length {length} noncontiguous", nc))
        try:
            case.judge(run, len(ran), variants, sample, expected)
        except Verdict as verdict:
            if verdict.evidence.get("variant", "").startswith("length"):
                actual = case.device(lambda s: run(samples.on_device(s, case.ctx.device, case.op)), sample)
                verdict.evidence["first_wrong_tensor"] = _first_wrong(actual, expected, case)
            raise
        ran.append(length)
        case.compared += 1
    empty = _emptied(_sample(case.op, case.dtype, 1))
    if empty is not None:
        case.alike(run, len(ran), "length 0", empty)
    case.evidence["lengths"] = ran + ([0] if empty is not None else [])


def _emptied(sample):
    """The sample with every list of tensors emptied, or None."""
    if sample is None:
        return None
    empty = lambda v: [] if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor) else v  # noqa: E731
    return sample_variants.rebuilt(sample, input=empty(sample.input), args=tuple(empty(a) for a in sample.args),
                                   kwargs={k: empty(v) for k, v in sample.kwargs.items()})


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    for subject, op in sorted(opinfo.foreach_by_subject().items()):
        for dtype in _dtypes(op):
            for check in SUITE.checks_for(op, dtype):
                yield subject, dtype_name(dtype), check

