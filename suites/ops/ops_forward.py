"""The `forward` check: every reference input (op.reference_inputs: the sample inputs plus, where
the OpInfo has them, upstream's larger set: non-contiguous, broadcasting, extremal values), each
run as generated and again non-contiguously (upstream's SampleInput.noncontiguous(): same values,
strided storage) and, for the first samples, in every other layout kind (permuted, at a storage
offset, expanded with a stride of 0, channels_last: suitelib/opinfo/layouts.py), on the device
against the CPU; each sample's edge variants (sample_variants: a
zero-size dimension, 0-dim tensor scalars), which the CPU may refuse: then the device must refuse
them with the same error type (Case.alike); and the arguments no sample moves off their default,
at other values (argument_variants).
"""

from __future__ import annotations

import suite_api

from suitelib.opinfo import checks, judge

DESCRIPTION = "every reference input, as generated and non-contiguous, run on the device and on the CPU, results compared"


@suite_api.check("forward", DESCRIPTION)
def run(case: judge.Case) -> None:
    checks.check_forward(case)  # in suitelib: the fuzz suite runs it too
