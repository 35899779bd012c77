"""The `gradgrad` check: double backward (upstream's supports_gradgrad), at one dtype per OpInfo.
For every sample input the gradients of the first-order gradients (their sum, differentiated
again with respect to every differentiable input; an input they do not depend on gets zeros)
on the device against the CPU's: a backward whose own derivative is wrong, or a device autograd
kernel whose backward is not differentiable, shows here and nowhere else. For the first samples,
the incoming gradients of both orders are also handed over in every layout kind (variants
grad_noncontiguous, grad_permuted, grad_offset, grad_expanded), as the backward check does for
the first order: the first backward's kernel, and the backward of the backward, each read them.
"""

from __future__ import annotations

import torch
import torch.utils._pytree as pytree

import suite_api
from dispatch_capture import uncounted

from suitelib.opinfo import calls, checks, sample_variants, samples

DESCRIPTION = "double backward: the gradients of the gradients of every differentiable input"


def applies(op, dtype: torch.dtype) -> bool:
    return (op.supports_autograd and op.supports_gradgrad and dtype == sample_variants.representative_dtype(op)
            and dtype in op.supported_backward_dtypes("cpu"))


def _gradgrad(op, sample, lay=None):
    """The second-order gradients of every differentiable input. The incoming gradients of both
    orders are those of a sum (`lay` None), or fixed pseudo-random values laid out by `lay`; then,
    as upstream's gradgradcheck does, the first-order incoming gradients are differentiated too
    (their second-order gradient is the first backward applied to the second-order incoming one)."""
    inputs = [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs])
              if isinstance(t, torch.Tensor) and t.requires_grad]
    outputs = [o for o in pytree.tree_leaves(calls.forward(op, sample))
               if isinstance(o, torch.Tensor) and o.requires_grad]
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    # The incoming gradients are handed over directly, made with the capture aside: the sums, casts
    # and magnitudes of a loss, and their backward, are the harness's, not the case's ops. A sum's
    # are constants (a complex output's magnitudes' too: their sgn, the abs's own curvature left out).
    with uncounted():
        if lay is None:
            incoming = [calls.loss_gradient(o, i, weighted=False) for i, o in enumerate(outputs)]
        else:
            incoming = [lay(calls.grad_weights(o, i, o.dtype)).requires_grad_() for i, o in enumerate(outputs)]
    grads = torch.autograd.grad(outputs, inputs, incoming, create_graph=True, allow_unused=True)
    if lay is not None:
        inputs = inputs + incoming
    differentiable = [g for g in grads if g is not None and g.requires_grad]
    if not differentiable:  # constant gradients (a linear op; or a backward that is not differentiable)
        with uncounted():  # the harness's zeros
            return [torch.zeros_like(t) for t in inputs]
    with uncounted():
        outer = [calls.loss_gradient(g, len(outputs) + i, weighted=False) if lay is None
                 else lay(calls.grad_weights(g, len(outputs) + i, g.dtype)) for i, g in enumerate(differentiable)]
    second = torch.autograd.grad(differentiable, inputs, outer, allow_unused=True)
    with uncounted():  # the harness's zeros for an input the gradients do not reach
        return [torch.zeros_like(t) if g is None else g for g, t in zip(second, inputs)]


@suite_api.check("gradgrad", DESCRIPTION, applies=applies, api=False)
def run(case) -> None:
    op = case.op
    inputs = samples.differentiable(op, case.dtype, reference=False)
    checks.check_values(case, lambda s: _gradgrad(op, s), inputs, with_variants=False)
    checks.check_gradient_layouts(case, inputs, _gradgrad)
