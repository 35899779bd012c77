"""The calls the suites make of an OpInfo on a sample: forward(), the gradients backward()
(the loss's gradient handed to the op's backward directly: loss_gradient(), grad_weights()) and
backward_from() (incoming gradients laid out), forward-mode jvps (forward_ad()), and what a call
produced and changed (Call, observed()), which the judge compares with the CPU's.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import torch
import torch.utils._pytree as pytree
from torch.autograd import forward_ad as fwAD

from dispatch_capture import uncounted

from . import samples


def has_backward(op, dtype: torch.dtype) -> bool:
    """Whether the OpInfo's gradients are tested at the dtype: it supports autograd there."""
    return op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")


def forward(op, sample):
    return sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))


class Call(NamedTuple):
    """What a call produced and what it changed: its result, and every tensor argument as the call
    left it (input, args, kwargs, in the sample's order, lists and dicts included), so that an
    argument the op writes (in place, out=, a side effect of a functional op) is compared with the
    CPU's like the result: what the CPU changed must change alike, what it left alone must stay."""
    result: Any
    arguments: list


def observed(run: Callable[[Any], Any]) -> Callable[[Any], Call]:
    """`run(sample)` returning the Call it made (its result and arguments after it)."""
    return lambda sample: Call(run(sample), samples.tensors(sample))


def _differentiated(op, sample) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The differentiable inputs of the sample and the differentiable outputs of forward() on it;
    LookupError where either is missing."""
    def differentiable(leaves) -> list[torch.Tensor]:
        return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]

    inputs = differentiable(pytree.tree_leaves([sample.input, sample.args, sample.kwargs]))
    outputs = differentiable(pytree.tree_leaves(forward(op, sample)))
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    return inputs, outputs


def grad_weights(output: torch.Tensor, index: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Fixed pseudo-random weights in [0.5, 1.5) of the output's shape, of `dtype`, on its device,
    a tensor of the caller's own: the same on both sides, and drawn from a generator of their own
    (the case's seeded ones are left alone)."""
    with uncounted():  # the harness's weights: their cast and copy to the device are no ops of the case's
        return _weights(tuple(output.shape), index).to(output.device, dtype=dtype, copy=True)


@functools.lru_cache(maxsize=64)
def _weights(shape: tuple[int, ...], index: int) -> torch.Tensor:
    """grad_weights' values, drawn once per shape: every variant of a sample, on both sides and in
    each gradient check, asks for the same ones (drawing them was a tenth of a backward case)."""
    generator = torch.Generator().manual_seed(7919 + index)
    return torch.rand(shape, generator=generator) + 0.5


def backward(op, sample, weighted: bool = False):
    """The gradients of every differentiable input of the sum of the outputs; `weighted`, of
    their sum weighted elementwise (grad_weights), so that the gradient reaching the op's
    backward is not all ones and a backward that ignores its values is wrong (the ops suite's
    backward check and the fuzz suite's backward examples; the compile and aten suites
    differentiate the plain sum)."""
    inputs, outputs = _differentiated(op, sample)
    # The gradients the loss's own backward would hand the op, handed to it directly: the sum,
    # products, casts and magnitudes that make the loss, and their backward, are the harness's,
    # and would be counted as the case's ops on the device.
    with uncounted():
        grads = [loss_gradient(o, i, weighted) for i, o in enumerate(outputs)]
    return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


def loss_gradient(output: torch.Tensor, index: int, weighted: bool) -> torch.Tensor:
    """The gradient of the loss backward() differentiates with respect to one output (the
    `index`th), a tensor of the caller's own: of the output's sum (weighted elementwise by
    grad_weights when `weighted`), the ones or the weights; of a complex output's magnitudes' sum,
    those times sgn(output), as abs's backward makes them. Call it with the capture aside."""
    if not output.is_complex():
        return grad_weights(output, index, output.dtype) if weighted else torch.ones_like(output)
    real = output.dtype.to_real()
    weights = grad_weights(output, index, real) if weighted else torch.ones_like(output, dtype=real)
    # made on the CPU: a device without complex arithmetic must fail in the op, not in the harness's sgn
    return (weights.cpu() * output.detach().cpu().sgn()).to(output.device)


def backward_from(op, sample, lay: Callable[[torch.Tensor], torch.Tensor]):
    """The gradients of every differentiable input for incoming gradients of fixed pseudo-random
    values (grad_weights) laid out by `lay`: what the op's backward is handed as it is (the
    layout axis of gradients, layouts.py)."""
    inputs, outputs = _differentiated(op, sample)
    with uncounted():  # the incoming gradients, laid out: the harness's
        grads = [lay(grad_weights(o, i, o.dtype)) for i, o in enumerate(outputs)]
    return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


def forward_ad(op, sample):
    with fwAD.dual_level():
        def dual(t):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                with uncounted():  # the primal and its tangent, the harness's
                    primal, tangent = t.detach(), torch.ones_like(t)
                return fwAD.make_dual(primal, tangent)
            return t

        s = sample.transform(dual)
        outputs = pytree.tree_leaves(op(s.input, *s.args, **s.kwargs))
        return [fwAD.unpack_dual(o).tangent for o in outputs if isinstance(o, torch.Tensor)]
