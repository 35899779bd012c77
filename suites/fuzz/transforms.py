"""The fuzz suite's transforms: what a chain does to one of an OpInfo's samples. Each takes the
sample and a `pick` (which operand, argument value or tensor pair, where there is a choice) and
returns the variant and the name evidence gives it, or None where it changes nothing of the
sample. Which variants are valid is the CPU's to decide; variants whose CPU result PyTorch leaves
undefined are not made (the reviewed tables below say which, and why).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable

import torch

from sides import NoReference

from evidence import dtype_name
from suitelib import reviewed
from suitelib.opinfo import argument_variants, facts, identity, judge, layouts, sample_variants, samples

INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32, torch.uint64)
INDICES = (torch.int32, torch.int64)  # the dtypes PyTorch takes indices in


def _tensors_changed(sample, change: Callable[[torch.Tensor], torch.Tensor | None]):
    """The sample with every tensor `change` returns a new one for replaced by it (None: `change`
    replaced none). The new tensors are leaves requiring grad as the old ones did."""
    changed = []

    def each(t: Any) -> Any:
        if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.numel():
            with torch.no_grad():
                new = change(t.detach())
            if new is not None:
                changed.append(True)
                return new.requires_grad_(t.requires_grad)
        return t
    variant = sample.transform(each)
    return variant if changed else None


def _floats(sample, change: Callable[[torch.Tensor], torch.Tensor]):
    """Every non-empty floating-point tensor of the sample changed by `change` (None: there is none)."""
    return _tensors_changed(sample, lambda t: change(t) if t.is_floating_point() else None)


def atol_scale(applied: list[str]) -> float:
    """How much the transforms applied shrink the magnitudes an example's results may have: the
    product of the scalings below 1 (scaled_2^-24: 2^-24). The absolute tolerance shrinks with
    them; else every result of a tiny input is within a fixed atol of zero, the wrong result too."""
    factor = 1.0
    for name in applied:
        if name.startswith("scaled_2^") and (power := int(name.removeprefix("scaled_2^"))) < 0:
            factor *= 2.0 ** power
    return factor


# The list ops (beyond the _foreach_* ones) whose result grows linearly with their list: the others
# (meshgrid, cartesian_prod, block_diag, einsum) grow as a product of it, and 130 tensors would not
# fit in memory.
LIST_OPS = ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
            "broadcast_tensors", "atleast_1d", "atleast_2d", "atleast_3d")


def _lengthened(op, sample, length: int):
    """The sample with its list of tensors (and every argument list as long: the other tensor
    lists, scalar lists) grown to `length` by repeating it, each tensor its own copy; for the
    _foreach_* ops and LIST_OPS."""
    if not (op.name.startswith("_foreach_") or op.name in LIST_OPS):
        return None
    if (not isinstance(sample.input, (list, tuple)) or not sample.input or len(sample.input) >= length
            or not all(isinstance(t, torch.Tensor) for t in sample.input)):
        return None
    n = len(sample.input)

    def grow(v: Any) -> Any:
        if not isinstance(v, (list, tuple)) or len(v) != n:
            return v
        return [x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x
                for x in (v[i % n] for i in range(length))]
    return sample_variants.rebuilt(sample, input=grow(sample.input), args=tuple(grow(a) for a in sample.args),
                                   kwargs={k: grow(v) for k, v in sample.kwargs.items()})


# --- integer extremes ----------------------------------------------------------------------------

# OpInfos whose output size is read from their integer inputs' values (a count, a number of
# repeats, a number of classes): at iinfo.max they would allocate gigabytes on each side (reviewed
# against torch 2.13's op_db).
SIZED_BY_VALUES = ("bincount", "repeat_interleave", "nn.functional.one_hot", "histc", "nn.functional.embedding_bag")


def _extremes(dtype: torch.dtype) -> Callable[[torch.Tensor], torch.Tensor | None]:
    """Every third element of a tensor of `dtype` iinfo.min, every third from the third
    iinfo.max. No -1 is left beside them in any integer tensor (-2 instead): iinfo.min / -1
    overflows in the CPU's own division, which x86 traps (SIGFPE) and no Python code can catch."""
    info = torch.iinfo(dtype)

    def extreme(t: torch.Tensor) -> torch.Tensor | None:
        if t.dtype not in INTEGERS or (t.dtype != dtype and not (t.is_signed() and (t == -1).any())):
            return None
        made = t.clone(memory_format=torch.contiguous_format)
        if t.is_signed():
            made[made == -1] = -2
        if t.dtype == dtype:
            flat = made.view(-1)
            flat[0::3] = _bound(info.min, dtype)
            flat[2::3] = _bound(info.max, dtype)
        return made
    return extreme


def _bound(value: int, dtype: torch.dtype) -> torch.Tensor:
    """`value` as a 0-dim tensor of `dtype` (uint64's max, past what Python's int converts to
    int64, from its bits)."""
    if value > torch.iinfo(torch.int64).max:
        return torch.tensor(value - 2 ** 64, dtype=torch.int64).view(dtype)
    return torch.tensor(value, dtype=dtype)


# --- duplicate indices ---------------------------------------------------------------------------

# OpInfos that write one of the values sent to a duplicated index, PyTorch leaving which one
# undefined ("the result is nondeterministic", "behavior is undefined if indices contain duplicate
# elements", scatter_'s "the order is undefined"), unless the argument named here asks them to
# combine the values (None: nothing does). Reviewed against torch 2.13's op_db and its docs.
LAST_WRITE_WINS: dict[str, str | None] = {"index_copy": None, "index_put": "accumulate", "put": "accumulate",
                                          "scatter": "reduce"}


def _argument(op, sample, name: str) -> Any:
    """The value the sample passes for the op's argument `name`, by keyword or position (None: not passed)."""
    if name in sample.kwargs:
        return sample.kwargs[name]
    names = [n for n, _ in argument_variants.parameters(op)][1:]
    return sample.args[names.index(name)] if name in names and names.index(name) < len(sample.args) else None


def _duplicated(dtype: torch.dtype) -> Callable[[torch.Tensor], torch.Tensor | None]:
    """Each index tensor (an int32 or int64 tensor at another dtype than the example's: an index
    into its tensors) with every element the one before it where that one's position is even: each
    index twice."""
    def duplicate(t: torch.Tensor) -> torch.Tensor | None:
        if t.dtype not in INDICES or t.dtype == dtype or t.numel() < 2:
            return None
        flat = t.reshape(-1)
        positions = torch.arange(flat.numel())
        return flat[positions - positions % 2].reshape(t.shape)
    return duplicate


# --- negative dims -------------------------------------------------------------------------------

DIMS = ("dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination")


def _negative_dims(op, sample):
    """The sample with every dimension argument (by keyword, or by position where every aten schema
    of the op names it one of DIMS) counted from the end: d - rank for each d >= 0."""
    first = sample_variants.input_tensor(sample)
    if first is None:
        return None
    rank = max(first.dim(), 1)

    def negative(v: Any) -> Any:
        return type(v)(negative(d) for d in v) if isinstance(v, (list, tuple)) else v - rank if v >= 0 else v
    kwargs = {k: negative(v) if k in DIMS and sample_variants.is_dims(v) else v for k, v in sample.kwargs.items()}
    args = list(sample.args)
    for i in sample_variants.dim_positions(op, sample, DIMS):
        args[i] = negative(args[i])
    variant = sample_variants.rebuilt(sample, args=tuple(args), kwargs=kwargs)
    return variant if (variant.args, variant.kwargs) != (sample.args, sample.kwargs) else None


class Transforms:
    """The transforms of one setting (an OpInfo at a dtype and direction): name -> (sample, pick)
    -> (variant, its name in evidence), or None where the transform changes nothing of the sample.
    Simplest first: Hypothesis shrinks towards the start."""

    NAMES = ("noncontiguous", "permuted", "offset", "expanded", "channels_last", "zero_size", "zero_dim",
             "negative_dims", "scaled_2^8", "scaled_2^-8", "scaled_2^24", "scaled_2^-24", "shifted_2^10",
             "int_extremes", "same_tensor_twice", "duplicate_indices", "out_is_input", "argument",
             "length_33", "length_130")

    def __init__(self, case: judge.Case, dtype: torch.dtype, samples: list, run: Callable[[Any], Any]) -> None:
        self.case, self.dtype, self.run = case, dtype, run
        try:
            moved = argument_variants.never_moved(case.op, samples)
            self.arguments = [(name, value) for name, default in moved.items()
                              for value in argument_variants.values_for(case.op, name, default)]
        except Exception:  # an OpInfo whose parameters cannot be read: no argument transform
            self.arguments = []

    def apply(self, name: str, sample, pick: int) -> tuple[Any, str] | None:
        made = self._made(name, sample, pick)
        return made if made is None or isinstance(made, tuple) else (made, name)

    def _made(self, name: str, sample, pick: int):
        op = self.case.op
        if name in layouts.KINDS or name == "channels_last":
            return self._laid_out(sample, name, pick)
        if name in ("zero_size", "zero_dim"):
            made = list(getattr(sample_variants, name)(sample))
            return made[pick % len(made)][1] if made else None
        if name == "negative_dims":
            return _negative_dims(op, sample)
        if name.startswith("scaled_2^"):  # exact: magnitudes across the dtype's range
            power = int(name.removeprefix("scaled_2^"))
            return _floats(sample, lambda t: t * 2.0 ** power)
        if name == "shifted_2^10":  # a large common offset (where a cancelling kernel loses its digits)
            return _floats(sample, lambda t: t + 1024)
        if name == "int_extremes":
            if self.dtype not in INTEGERS or op.name in SIZED_BY_VALUES:
                return None
            return _tensors_changed(sample, _extremes(self.dtype))
        if name == "same_tensor_twice":
            made = [(v, apart) for _, v, apart in identity.same_tensor_twice(sample)]
            return self._aliasing_defined(*made[pick % len(made)]) if made else None
        if name == "duplicate_indices":
            if op.name in LAST_WRITE_WINS and not (
                    (combines := LAST_WRITE_WINS[op.name]) and _argument(op, sample, combines)):
                return None
            return _tensors_changed(sample, _duplicated(self.dtype))
        if name == "out_is_input":
            return self._out_is_input(sample, pick)
        if name == "argument":
            if not self.arguments:
                return None
            argument, value = self.arguments[pick % len(self.arguments)]
            return sample_variants.rebuilt(sample, kwargs={**sample.kwargs, argument: value})
        return _lengthened(op, sample, int(name.removeprefix("length_")))

    @staticmethod
    def _laid_out(sample, kind: str, pick: int):
        """Every operand in the layout (pick 0, which shrinking prefers), or, where the kind changes
        several, only operand pick - 1 (modulo their number), named `kind:operand`: operands of
        different layouts, which a kernel taking every operand's strides from the first misreads."""
        operands = layouts.changeable(sample, kind) if pick and kind in layouts.KINDS else 1
        if operands <= 1:
            return layouts.laid_out(sample, kind)
        operand = (pick - 1) % operands
        variant = layouts.laid_out(sample, kind, operand)
        return (variant, f"{kind}:{operand}") if variant is not None else None

    def _aliasing_defined(self, variant, apart):
        """The aliased variant, unless the CPU's result depends on the aliasing (undefined)."""
        return None if identity.aliasing_decides(self.case, self.run, variant, apart) else variant

    def _out_is_input(self, sample, pick: int):
        if not self.case.op.supports_out:
            return None
        try:
            output = self.case.cpu(self.run, sample)
        except NoReference:
            return None
        if not isinstance(output, torch.Tensor):
            return None  # out= of one tensor only: where it is an input is the question
        made = [v for _, v in identity.out_is_input(self.case.op, sample, output)]
        return self._aliasing_defined(made[pick % len(made)], identity.out_apart(made[pick % len(made)])) \
            if made else None


@reviewed.document
@cache
def slow_on_cpu_facts() -> dict[str, dict[str, Any]]:
    """facts.json's slow_on_cpu facts, each naming transforms of this suite and a dtype the OpInfo
    has on the CPU."""
    return facts.applying("slow_on_cpu", lambda op, fact: set(fact["transforms"]) <= set(Transforms.NAMES) and bool(
        set(fact["dtypes"]) & {dtype_name(d) for d in op.supported_dtypes("cpu")}),
        "it names a transform this suite does not make, or the OpInfo has none of its dtypes on the CPU")


@reviewed.document
@cache
def undefined_on_cpu_facts() -> dict[str, dict[str, Any]]:
    """facts.json's undefined_on_cpu facts, each variant one that a check makes: this suite's
    transforms and forms, or the ops suite's edge and invalid variants (samples.MADE_HERE, which
    checks that an OpInfo's samples make those)."""
    known = {*Transforms.NAMES, *FORMS, *samples.MADE_HERE}
    return facts.applying("undefined_on_cpu", lambda op, fact: set(fact["variants"]) <= known,
                          "it names a variant no check makes")


def too_slow_on_cpu(op, dtype: torch.dtype, transform: str) -> bool:
    """Whether the transform is not made for the OpInfo at the dtype: the reviewed fact slow_on_cpu
    (facts.json, measured on plain CPU tensors), the CPU's own kernel taking longer than a case's
    whole budget on the values it makes (an example cannot be stopped halfway)."""
    slow = facts.about(op, "slow_on_cpu")
    return slow is not None and dtype_name(dtype) in slow["dtypes"] and transform in slow["transforms"]


# --- forms: how the op is called ----------------------------------------------------------------

FORMS = ("functional", "inplace", "out")


def with_out(case: judge.Case, sample):
    """The sample with out= tensors of the CPU's result's shapes and dtypes, full of values that
    must not matter (sample_variants.filled_like), for an OpInfo with supports_out: None where it
    has none, the sample has its out= already, or the CPU refuses the sample or returns no tensors."""
    if not case.op.supports_out or "out" in sample.kwargs:
        return None
    try:
        output = case.cpu(lambda s: case.op(s.input, *s.args, **s.kwargs), sample)
    except NoReference:
        return None
    leaves, spec = torch.utils._pytree.tree_flatten(output)
    if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
        return None
    out = torch.utils._pytree.tree_unflatten([sample_variants.filled_like(t) for t in leaves], spec)
    return sample_variants.rebuilt(sample, kwargs={**sample.kwargs, "out": out})
