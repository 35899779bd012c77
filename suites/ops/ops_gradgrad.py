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

from suitelib.opinfo import sample_variants
from suitelib.opinfo import runs

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
    outputs = [o for o in pytree.tree_leaves(runs.forward(op, sample))
               if isinstance(o, torch.Tensor) and o.requires_grad]
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    if lay is None:
        loss = sum(o.to(torch.float32).sum() if not o.is_complex() else o.abs().sum() for o in outputs)
        grads = torch.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    else:
        incoming = [lay(runs.grad_weights(o, i).to(o.dtype)).requires_grad_() for i, o in enumerate(outputs)]
        grads = torch.autograd.grad(outputs, inputs, incoming, create_graph=True, allow_unused=True)
        inputs = inputs + incoming
    differentiable = [g for g in grads if g is not None and g.requires_grad]
    if not differentiable:  # constant gradients (a linear op; or a backward that is not differentiable)
        return [torch.zeros_like(t) for t in inputs]
    if lay is None:
        total = sum(g.to(torch.float32).sum() if not g.is_complex() else g.abs().sum() for g in differentiable)
        second = torch.autograd.grad(total, inputs, allow_unused=True)
    else:
        second = torch.autograd.grad(differentiable, inputs, [lay(runs.grad_weights(g, len(outputs) + i).to(g.dtype))
                                                              for i, g in enumerate(differentiable)], allow_unused=True)
    return [torch.zeros_like(t) if g is None else g for g, t in zip(second, inputs)]


@suite_api.check("gradgrad", DESCRIPTION, applies=applies, api=False)
def run(case) -> None:
    op = case.op
    samples = runs.gradient_samples(op, case.dtype, reference=False)
    runs.check_values(case, lambda s: _gradgrad(op, s), samples, with_variants=False)
    runs.check_gradient_layouts(case, samples, _gradgrad)
