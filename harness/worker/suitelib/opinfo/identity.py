"""Argument identity: one tensor passed in two places (`add(x, x)`; out= one of the inputs,
`cat([a, b], out=a)`), which the device must see as one tensor, as the CPU does: it allows the
overlap or refuses it (even where the two share no bytes, an empty `a`), and the device must do
the same. The ops suite's `out` check and the fuzz suite share these variants.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

from comparison import Mismatch, compare
from sides import NoReference

from . import sample_variants


def out_is_input(op, sample, output: torch.Tensor) -> Iterator[tuple[int, Any]]:
    """(position, variant): the sample with out= each of its tensor inputs of the output's dtype.
    Only an input of the output's shape (nothing is resized: the question is the aliasing alone),
    an empty one (nothing of it is read) or any input of an elementwise op (TensorIterator refuses
    to resize an operand it also reads): other kernels resize their out= and then read the input
    it is, which corrupts the CPU's own heap (avg_pool3d growing it, linalg.eigvalsh shrinking it)."""
    elementwise = isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo))
    leaves = pytree.tree_leaves([sample.input, sample.args])
    for position, t in enumerate(leaves):
        if (isinstance(t, torch.Tensor) and t.layout == torch.strided and t.dtype == output.dtype
                and not t.requires_grad and (elementwise or not t.numel() or t.shape == output.shape)):
            yield position, sample_variants.rebuilt(sample, kwargs={**sample.kwargs, "out": t})


def out_apart(variant) -> Any:
    """An out_is_input variant with an out= of its own (the same values, another tensor)."""
    return sample_variants.rebuilt(variant, kwargs={**variant.kwargs, "out": variant.kwargs["out"].clone()})


def same_tensor_twice(sample) -> Iterator[tuple[tuple[int, int], Any, Any]]:
    """((first, second), variant, apart): the sample with its tensor argument at `second` replaced
    by the one at `first` (the same shape, dtype and layout): one tensor in two places; `apart`,
    the same values in two tensors."""
    leaves, spec = pytree.tree_flatten([sample.input, sample.args, sample.kwargs])
    tensors = [(p, t) for p, t in enumerate(leaves) if isinstance(t, torch.Tensor) and t.layout == torch.strided]
    for i, (first, a) in enumerate(tensors):
        for second, b in tensors[i + 1:]:
            if a.shape == b.shape and a.dtype == b.dtype and a.requires_grad == b.requires_grad:
                yield (first, second), _replaced(sample, leaves, spec, second, a), \
                    _replaced(sample, leaves, spec, second, a.detach().clone().requires_grad_(a.requires_grad))


def _replaced(sample, leaves: list[Any], spec, position: int, value: Any) -> Any:
    changed = list(leaves)
    changed[position] = value
    input, args, kwargs = pytree.tree_unflatten(changed, spec)
    return sample_variants.rebuilt(sample, input=input, args=tuple(args), kwargs=kwargs)


def aliasing_decides(case, run: Callable[[Any], Any], variant, apart) -> bool:
    """Whether the CPU takes the aliased `variant` and computes something else than with the same
    values in separate tensors (`apart`): a result that depends on the order in which the kernel
    reads and writes the shared memory, which PyTorch does not define (the device is not judged
    on it)."""
    try:
        aliased, separate = case.cpu(run, variant), case.cpu(run, apart)
    except NoReference:
        return False  # refused (or no reference at all): Case.alike decides
    try:
        compare(aliased, separate, case.rtol, case.atol)
    except Mismatch:
        return True
    return False
