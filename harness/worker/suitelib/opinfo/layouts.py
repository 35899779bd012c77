"""The layout axis: the memory layouts a tensor argument (or an incoming gradient) is given in. A
kernel that reads its operands in storage order, or assumes each batch follows the one before,
computes the right values for contiguous inputs and wrong ones for the others; models pass every
kind (transposed weights, expanded rotary tables and masks, slices of a KV cache).

  noncontiguous  upstream's noncontiguous_like: the same values interleaved with others
  permuted       the same values with the dimensions' memory order reversed (a transpose's strides)
  offset         the same values, contiguous, at a storage offset (a slice of a larger tensor)
  expanded       the first slice along the first dimension longer than 1, expanded over it: a
                 stride of 0 (new values: the CPU computes its own reference)
  channels_last  4-d and 5-d tensors in channels_last memory format (sample_variants)

A kind applied to a tensor it changes nothing about (a scalar, a tensor too small to permute)
leaves it as it is; a sample none of whose tensors it changes has no variant of that kind.
"""

from __future__ import annotations

import unittest
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.common_utils import noncontiguous_like

from dispatch_capture import uncounted
from evidence import dtype_name
from suitelib import info_decorators

from . import sample_variants

# How many of a case's samples get every kind (the first ones): a kernel that misreads a layout
# misreads it for any values, and each kind costs a device run per sample.
SAMPLES_PER_CASE = 3
OFFSET = 3  # elements before a tensor in its storage


def _strided(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.layout == torch.strided and t.numel() > 0


# The dtypes the axis runs at: upstream's own (TestCommon.test_noncontiguous_samples runs at
# float32, int64 and complex64) and bfloat16, the dtype models train in on the device. A kernel
# misreads a layout in its indexing, which the element type rarely changes, and each kind costs a
# device run per sample: its runs at the other dtypes were 30 % of the forward and backward
# checks' time. An OpInfo with none of them gets the axis at its representative dtype. The fuzz suite
# draws layouts at every dtype.
DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.complex64)


def not_at(op, dtype: torch.dtype) -> str | None:
    """Why no layout variant (noncontiguous included) is run for the OpInfo at `dtype`, or None
    when it is one of the OpInfo's DTYPES (or, with none of them, its representative dtype)."""
    supported = op.supported_dtypes("cpu")
    at = [d for d in DTYPES if d in supported] or [sample_variants.representative_dtype(op)]
    if dtype in at:
        return None
    return f"the layout axis runs at {', '.join(dtype_name(d) for d in at)} for this OpInfo, not at {dtype_name(dtype)}"


def apply_to(op, dtype: torch.dtype) -> bool:
    """Whether the layout kinds apply to the OpInfo: not where upstream itself skips or expects to
    fail TestCommon.test_noncontiguous_samples (ops whose result depends on the layout, such as
    as_strided_scatter's backward, which reads the gradient's storage)."""
    for decorator, _ in info_decorators.decorations(op, dtype, "TestCommon", ["test_noncontiguous_samples"],
                                                     (None, "cpu")):
        name = getattr(decorator, "__qualname__", getattr(decorator, "__name__", ""))
        if name == unittest.expectedFailure.__name__ or name.startswith(unittest.skip.__name__):
            return False
    return True


def permuted(t: torch.Tensor) -> torch.Tensor | None:
    if not _strided(t) or sum(1 for s in t.shape if s > 1) < 2:
        return None
    order = list(reversed(range(t.dim())))
    with torch.no_grad():
        laid = t.detach().permute(order).contiguous().permute(order)
    return laid.requires_grad_(t.requires_grad)


def offset(t: torch.Tensor) -> torch.Tensor | None:
    if not _strided(t):
        return None
    with torch.no_grad():
        laid = torch.empty(t.numel() + OFFSET, dtype=t.dtype, device=t.device).narrow(0, OFFSET, t.numel())
        laid = laid.view(t.shape).copy_(t.detach())
    return laid.requires_grad_(t.requires_grad)


def expanded(t: torch.Tensor) -> torch.Tensor | None:
    dim = next((d for d, size in enumerate(t.shape) if size > 1), None) if _strided(t) else None
    if dim is None:
        return None
    with torch.no_grad():
        laid = t.detach().narrow(dim, 0, 1).clone().expand(t.shape)
    return laid.requires_grad_(t.requires_grad)


def noncontiguous(t: torch.Tensor) -> torch.Tensor | None:
    return noncontiguous_like(t) if _strided(t) and t.is_contiguous() else None


# name -> (what it does to one tensor, whether the values stay the same)
KINDS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor | None], bool]] = {
    "noncontiguous": (noncontiguous, True),
    "permuted": (permuted, True),
    "offset": (offset, True),
    "expanded": (expanded, False),
}


@uncounted()
def laid_out(sample, kind: str, operand: int | None = None):
    """The sample with every tensor in the layout `kind` (with `operand`, only the one of that
    index among the tensors the kind changes, in the sample's order: operands of different
    layouts), or None when it changes none of them."""
    if kind == "channels_last":
        return sample_variants.channels_last(sample)
    lay = KINDS[kind][0]
    changed = []

    def apply(t: Any) -> Any:
        laid = lay(t) if isinstance(t, torch.Tensor) else None
        if laid is None:
            return t
        changed.append(True)
        return laid if operand is None or len(changed) - 1 == operand else t

    variant = sample.transform(apply)
    return variant if len(changed) > (operand or 0) else None


def changeable(sample, kind: str) -> int:
    """How many of the sample's tensors the kind changes (channels_last: the sample as a whole)."""
    if kind == "channels_last":
        return int(sample_variants.channels_last(sample) is not None)
    return sum(1 for t in _tensors(sample) if KINDS[kind][0](t) is not None)


def sample_layouts(sample) -> Iterator[tuple[str, Any, bool]]:
    """(kind, the sample laid out so, whether its values are the sample's) for every kind that
    changes the sample, noncontiguous excepted (every sample gets that one)."""
    for kind in ("permuted", "offset", "expanded", "channels_last"):
        variant = laid_out(sample, kind)
        if variant is not None:
            yield kind, variant, kind == "channels_last" or KINDS[kind][1]


@uncounted()
def dense(sample):
    """The sample with every tensor contiguous (the same values)."""
    return sample.transform(lambda t: t.detach().contiguous().requires_grad_(t.requires_grad)
                            if isinstance(t, torch.Tensor) and t.layout == torch.strided else t)


@uncounted()
def writes_into_overlap(before, after) -> bool:
    """Whether a run wrote into a tensor of `before` whose elements overlap (a stride of 0),
    `after` being the copy it ran on: no valid input, as the device may rightly refuse it (in-place
    updates of running statistics, out= arguments). An out= whose elements overlap counts whatever
    the values (threads write its one place in no defined order: whether they changed is not
    reproducible)."""
    outs = [t for t in pytree.tree_leaves(before.kwargs.get("out")) if isinstance(t, torch.Tensor)]
    return any(torch._debug_has_internal_overlap(t) == 1 for t in outs) or any(
        0 in b.stride() and b.numel() and not torch.equal(_bytes(b), _bytes(a))
        for b, a in zip(_tensors(before), _tensors(after)))


def _bytes(t: torch.Tensor) -> torch.Tensor:
    """The tensor's elements as bytes: equal means identical (NaN included, any dtype)."""
    return t.detach().contiguous().view(-1).view(torch.uint8)


def _tensors(sample) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs])
            if isinstance(t, torch.Tensor) and t.layout == torch.strided]


def gradient(kind: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The incoming gradient laid out as `kind` (as it is, where the kind changes nothing)."""
    lay = KINDS[kind][0]

    def laid(g: torch.Tensor) -> torch.Tensor:
        changed = lay(g)
        return g if changed is None else changed
    return laid
