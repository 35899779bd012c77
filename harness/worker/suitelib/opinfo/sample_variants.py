"""Inputs the OpInfo samples never are, made from the samples: edge inputs (a zero-size
dimension, 0-dim tensor scalars) for the forward check, invalid variants (a dimension off by one,
an index at the bound, a dim out of range, a mismatched dtype) for the errors check, and
channels_last copies for the layout check. Each transform returns new SampleInputs and leaves
the sample alone; which of them are valid is the CPU's to decide, never this module's.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.opinfo.core import SampleInput

from dispatch_capture import made_uncounted, uncounted
from evidence import dtype_name

from . import facts


def representative_dtype(op) -> torch.dtype:
    """The one dtype a check whose verdict does not depend on the dtype (layout, errors) runs at:
    float32 where the op supports it on the CPU, else its first supported dtype by name."""
    supported = op.supported_dtypes("cpu")
    return torch.float32 if torch.float32 in supported else min(supported, key=dtype_name)


def _strided(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.layout == torch.strided


def rebuilt(sample: SampleInput, input: Any = None, args: Any = None, kwargs: Any = None) -> SampleInput:
    """The sample with its input, args or kwargs replaced, everything else kept."""
    return SampleInput(sample.input if input is None else input,
                       args=sample.args if args is None else args,
                       kwargs=sample.kwargs if kwargs is None else kwargs,
                       output_process_fn_grad=sample.output_process_fn_grad,
                       broadcasts_input=sample.broadcasts_input, name=sample.name)


@uncounted()
def filled_like(t: torch.Tensor) -> torch.Tensor:
    """An out= for a result like `t`, on the CPU, full of values that must not matter (upstream's
    test_out): NaN for floating-point and complex tensors, the largest value for integers, True
    for bool."""
    if t.dtype.is_floating_point or t.dtype.is_complex:
        value: Any = math.nan
    elif t.dtype == torch.bool:
        value = True
    else:
        value = torch.iinfo(t.dtype).max
    return torch.full(t.shape, value, dtype=t.dtype)


def _leaf(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """`t` detached, requiring grad as `like` does (an edge variant's tensors are leaves, as the
    sample's are)."""
    return t.detach().requires_grad_(like.requires_grad)


def input_tensor(sample: SampleInput) -> torch.Tensor | None:
    """The tensor the op is "of": the input, or the first tensor of an input list (cat, stack)."""
    if _strided(sample.input):
        return sample.input
    if isinstance(sample.input, (list, tuple)) and sample.input and _strided(sample.input[0]):
        return sample.input[0]
    return None


def signature(sample: SampleInput) -> str:
    """What a sample is made of, values aside (its tensors' dtypes and shapes, its other
    arguments): samples alike make alike variants, which run once."""
    return repr(sample.transform(lambda t: (t.dtype, tuple(t.shape)) if isinstance(t, torch.Tensor) else t))


# --- edge inputs (forward) -------------------------------------------------------------------

def undefined_on_cpu(op, kind: str) -> str | None:
    """Why variants of `kind` are not made for the OpInfo, or None: the reviewed fact
    undefined_on_cpu (facts.json), variants whose CPU result is undefined in torch 2.13 (they crash
    PyTorch's own CPU kernel, which would kill the worker, or leave the result in uninitialized
    memory), so nothing can be learnt of the device from them; each reproduced on CPU tensors."""
    undefined = facts.about(op, "undefined_on_cpu")
    return undefined["reason"] if undefined and kind in undefined["variants"] else None


@made_uncounted
def zero_size(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """The sample with its input's first (`zero_size`) and last (`zero_size_last`) dimension
    made empty, and the same dimension (aligned from the right, as broadcasting aligns) of every
    other tensor where it has the input's size, so that operands which matched still match: a
    reduction over an empty dimension, an elementwise op on empty operands, a matrix product with
    an empty side."""
    first = input_tensor(sample)
    if first is None or first.dim() == 0 or not first.numel():
        return
    dims = [("zero_size", 0)] + ([("zero_size_last", first.dim() - 1)] if first.dim() > 1 else [])
    for name, dim in dims:
        from_right, size = first.dim() - dim, first.shape[dim]

        def empty(t: Any, from_right: int = from_right, size: int = size) -> Any:
            if not _strided(t) or t.dim() < from_right or t.shape[t.dim() - from_right] != size:
                return t
            return _leaf(t.narrow(t.dim() - from_right, 0, 0), t)

        yield name, sample.transform(empty)


@made_uncounted
def zero_dim(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """The sample with every 1-element tensor of one or more dimensions made a 0-dim tensor (a
    tensor scalar): type promotion and broadcasting treat them differently."""
    tensors = [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if _strided(t)]
    if not any(t.dim() > 0 and t.numel() == 1 for t in tensors):
        return

    def scalar(t: Any) -> Any:
        if not _strided(t) or t.dim() == 0 or t.numel() != 1:
            return t
        return _leaf(t.reshape(()), t)

    yield "zero_dim", sample.transform(scalar)


# --- layout (channels_last) ------------------------------------------------------------------

def channels_last(sample: SampleInput) -> SampleInput | None:
    """The sample with every 4-d tensor in channels_last and every 5-d one in channels_last_3d
    memory format (the same values), or None when it has no such tensor or none changes."""
    changed = False

    def convert(t: Any) -> Any:
        nonlocal changed
        if not _strided(t) or t.dim() not in (4, 5):
            return t
        fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        moved = t.detach().contiguous(memory_format=fmt)
        changed = changed or moved.stride() != t.stride()
        return _leaf(moved, t)

    variant = sample.transform(convert)
    return variant if changed else None


def memory_formats(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """For ops that take a memory_format: the sample's input (made 4-d by a leading dimension when
    it is 3-d) in channels_last format, as it is and with each memory_format asked for, and
    contiguous with channels_last asked for."""
    first = sample.input
    if not _strided(first) or first.dim() not in (3, 4, 5):
        return
    base = first.detach().unsqueeze(0) if first.dim() == 3 else first.detach()
    last = torch.channels_last if base.dim() == 4 else torch.channels_last_3d
    dense = _leaf(base.contiguous(), first)
    strided = _leaf(base.contiguous(memory_format=last), first)
    yield "channels_last", rebuilt(sample, input=strided)
    for fmt in (torch.preserve_format, torch.contiguous_format, last):
        yield f"channels_last, memory_format={fmt}", rebuilt(sample, input=strided,
                                                              kwargs={**sample.kwargs, "memory_format": fmt})
    yield f"contiguous, memory_format={last}", rebuilt(sample, input=dense, kwargs={**sample.kwargs, "memory_format": last})


# --- invalid variants (errors) ---------------------------------------------------------------

def schema_arguments(op) -> list[list[str]]:
    """The argument names of every aten schema of the op's aten name (empty when it has none):
    a positional argument's meaning, where a sample passes it positionally."""
    names = {op.aten_name, op.name.split(".")[-1]}
    schemas: list[list[str]] = []
    for name in names:
        try:
            schemas += [[a.name for a in s.arguments] for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")]
        except RuntimeError:
            continue
    return schemas


def dim_positions(op, sample: SampleInput, names: tuple[str, ...] = ("dim",)) -> list[int]:
    """Positions in sample.args holding an int or a list of ints that every aten
    schema of the op with at least that many arguments names one of `names`."""
    schemas = schema_arguments(op)
    found = []
    for i, value in enumerate(sample.args):
        if not is_dims(value):
            continue
        named = [s[i + 1] for s in schemas if len(s) > i + 1]
        if named and all(n in names for n in named):
            found.append(i)
    return found


def is_dims(value: Any) -> bool:
    """Whether the value can be a dimension argument: an int, or a non-empty list or tuple of them
    (bools are no dims)."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(is_dims(v) and not isinstance(v, (list, tuple)) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _dims_out_of_range(op, sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """`dim` (a keyword, or positional where the schema names it) at the input's rank and below
    minus its rank: one past each end of the valid range."""
    first = input_tensor(sample)
    if first is None:
        return
    rank = max(first.dim(), 1)
    for bad in (rank, -rank - 1):
        if isinstance(sample.kwargs.get("dim"), int) and not isinstance(sample.kwargs["dim"], bool):
            yield f"dim={bad}", rebuilt(sample, kwargs={**sample.kwargs, "dim": bad})
        for i in dim_positions(op, sample):
            if not isinstance(sample.args[i], int):
                continue
            args = list(sample.args)
            args[i] = bad
            yield f"dim={bad}", rebuilt(sample, args=tuple(args))


def _grown(t: torch.Tensor, dim: int) -> torch.Tensor:
    """`t` with dimension `dim` one longer (its first slice repeated)."""
    return _leaf(torch.cat([t.detach(), t.detach().narrow(dim, 0, 1)], dim=dim), t)


def _shapes_off_by_one(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """Every tensor but the first (the second of a tensor list, such as cat's) with one dimension
    one longer, one dimension at a time: a contraction, a concatenated or broadcast dimension
    that no longer matches."""
    if isinstance(sample.input, (list, tuple)):
        tensors = [i for i, t in enumerate(sample.input) if _strided(t) and t.numel()]
        if len(tensors) >= 2:
            i = tensors[1]
            for dim in range(sample.input[i].dim()):
                listed = list(sample.input)
                listed[i] = _grown(listed[i], dim)
                yield f"input[{i}] dim {dim} + 1", rebuilt(sample, input=type(sample.input)(listed))
        return
    for i, t in enumerate(sample.args):
        if _strided(t) and t.numel() and not (t.dtype in (torch.int32, torch.int64) and is_index_like(sample, t)):
            for dim in range(t.dim()):
                args = list(sample.args)
                args[i] = _grown(t, dim)
                yield f"args[{i}] dim {dim} + 1", rebuilt(sample, args=tuple(args))


def is_index_like(sample: SampleInput, t: torch.Tensor) -> bool:
    """An integer tensor among floating-point operands: an index, not an operand of arithmetic."""
    first = input_tensor(sample)
    return first is not None and first.dtype != t.dtype


def _indices_at_bounds(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """Each integer index tensor (an integer tensor among tensors of another dtype) with its first
    element at `size` and at `-size - 1`, for every distinct size of the other tensors'
    dimensions: one past each end of what indexes a dimension of that size."""
    leaves = [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if _strided(t)]
    indices = [t for t in leaves if t.dtype in (torch.int32, torch.int64) and t.numel()]
    others = [t for t in leaves if t.dtype not in (torch.int32, torch.int64)]
    if not indices or not others:
        return
    sizes = sorted({s for t in others for s in t.shape if s > 0})
    for target in indices:
        for size in sizes:
            for bad in (size, -size - 1):
                def plant(t: Any, target: torch.Tensor = target, bad: int = bad) -> Any:
                    if t is not target:
                        return t
                    planted = t.detach().clone(memory_format=torch.contiguous_format)
                    planted.view(-1)[0] = bad
                    return planted
                yield f"index {bad}", sample.transform(plant)


def _dtypes_mismatched(sample: SampleInput) -> Iterator[tuple[str, SampleInput]]:
    """Each floating-point tensor argument but the input in another floating-point dtype (float32
    for bfloat16, float16 and float64; bfloat16 for float32): ops that refuse mixed dtypes (matrix
    products, index_add's source) must refuse them on the device too."""
    first = input_tensor(sample)
    if first is None or not first.dtype.is_floating_point:
        return
    other = torch.bfloat16 if first.dtype == torch.float32 else torch.float32
    for i, t in enumerate(sample.args):
        if _strided(t) and t.dtype == first.dtype:
            args = list(sample.args)
            args[i] = _leaf(t.to(other), t)
            yield f"args[{i}] as {str(other).split('.')[-1]}", rebuilt(sample, args=tuple(args))


INVALID_KINDS: dict[str, Callable[[Any, SampleInput], Iterator[tuple[str, SampleInput]]]] = {
    "shape_off_by_one": lambda op, s: _shapes_off_by_one(s),
    "index_out_of_range": lambda op, s: _indices_at_bounds(s),
    "dim_out_of_range": _dims_out_of_range,
    "dtype_mismatch": lambda op, s: _dtypes_mismatched(s),
}


@made_uncounted
def invalid_variants(op, sample: SampleInput) -> Iterator[tuple[str, str, SampleInput]]:
    """(kind, what was changed, variant) for every invalid variant of `sample` this module makes
    (none of a kind whose CPU result is undefined for the op)."""
    for kind, make in INVALID_KINDS.items():
        if undefined_on_cpu(op, kind):
            continue
        for change, variant in make(op, sample):
            yield kind, change, variant
