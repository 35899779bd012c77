"""The `errors` check: what the device does with inputs the CPU refuses. A backend that computes
an answer where PyTorch raises gives its user a silently wrong result.

- Upstream's error inputs (OpInfo.error_inputs, as TestCommon.test_errors runs them): each must
  raise on the device an error of the type the CPU raises, with a message matching upstream's
  regex. An error input that this CPU does not refuse as upstream says is counted
  (`error_inputs_not_raised_on_cpu`), not judged.
- Invalid variants of every sample input (sample_variants.invalid_variants): an operand with one
  dimension off by one (a contraction, a concatenated or broadcast dimension), an index tensor
  holding `size` or `-size - 1`, a `dim` one past either end, an operand of another
  floating-point dtype. The CPU decides which are invalid: where it raises, the device must
  raise an error of the same type; a variant the CPU accepts is not run on the device (a CPU
  kernel that does not validate an index reads arbitrary memory; the device may rightly refuse).
  Kinds whose CPU result is undefined for an op (a crash of its own kernel) are not made
  (the reviewed fact undefined_on_cpu, suitelib/opinfo/facts.json).

Runs at one dtype per OpInfo (sample_variants.representative_dtype). Evidence names the variant (the
kind of invalid input, `error_input` for upstream's), what was changed, and both errors.
"""

from __future__ import annotations

import torch

import suite_api
from dispatch_capture import uncounted

from suitelib.opinfo import sample_variants, samples

DESCRIPTION = ("inputs the CPU refuses: upstream's error_inputs (the CPU's error type and upstream's message) and "
               "invalid variants of every sample (a dimension off by one, an index at the bound, a dim out of "
               "range, a mismatched dtype), which the device must refuse alike")


def applies(op, dtype: torch.dtype) -> bool:
    return dtype == sample_variants.representative_dtype(op)


@suite_api.check("errors", DESCRIPTION, applies=applies)
def run(case) -> None:
    op = case.op
    raw = lambda s: op(s.input, *s.args, **s.kwargs)  # noqa: E731
    error_inputs = 0
    with uncounted():  # inputs the harness makes on the CPU: no op of the case's
        errors = list(op.error_inputs("cpu")) if op.error_inputs_func is not None else []
    for index, error in enumerate(errors):
        error_inputs += 1
        case.alike(raw, index, "error_input", error.sample_input, error_type=error.error_type,
                   error_regex=error.error_regex, compare_accepted=False)
        case.compared += 1
    case.evidence["error_inputs"] = error_inputs
    case.evidence["error_inputs_not_raised_on_cpu"] = case.errors_not_raised_on_cpu
    refused, seen = {}, set()
    for index, sample in enumerate(samples.generated(op, case.dtype, reference=False)):
        if (signature := sample_variants.signature(sample)) in seen:
            continue
        seen.add(signature)
        for kind, change, variant in sample_variants.invalid_variants(op, sample):
            if case.alike(raw, index, kind, variant, change=change, compare_accepted=False):
                refused[kind] = refused.get(kind, 0) + 1
        case.compared += 1
    case.evidence["invalid_variants_refused"] = refused
    if not error_inputs and not case.compared:
        case.vacuous = "no error inputs and no sample input to make invalid variants of"
