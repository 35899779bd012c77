"""The autograd checks (OpInfos that support autograd, at dtypes with backward support):

- `backward`: gradients of every input over the reference inputs, as generated and
  non-contiguously (the first samples in every layout kind, suitelib/opinfo/layouts.py), and
  over the argument variants, of the outputs' sum weighted by fixed pseudo-random weights, so the
  gradient the op's backward gets is not all ones; and for the first samples, the incoming
  gradient itself in every layout kind (variants grad_noncontiguous, grad_permuted, grad_offset,
  grad_expanded);
- `forward_ad` (OpInfos with supports_forward_ad): forward-mode jvp compared.
"""

from __future__ import annotations

import suite_api

from suitelib.opinfo import calls, checks, judge, samples


@suite_api.check("backward", "gradients of every input, over the reference inputs as generated and non-contiguous",
                 applies=calls.has_backward)
def backward(case: judge.Case) -> None:
    checks.check_backward(case)  # in suitelib: the fuzz suite runs it too


# a feature of autograd beyond the op itself: it does not decide whether the op's API works
@suite_api.check("forward_ad", "forward-mode jvp", api=False,
                 applies=lambda op, dtype: calls.has_backward(op, dtype) and op.supports_forward_ad)
def forward_ad(case: judge.Case) -> None:
    checks.check_values(case, lambda s: calls.forward_ad(case.op, s),
                        samples.generated(case.op, case.dtype, reference=False, requires_grad=True),
                        with_variants=False)
