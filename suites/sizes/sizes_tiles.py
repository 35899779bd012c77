"""The tile-boundary inputs of the sizes suite: for each op of the table below, one of the
OpInfo's own samples (the first that fits the op's entry) with one dimension at a time scaled to
n-1, n and n+1, every other dimension and argument as the sample has them, in a contiguous and a
transposed layout.

An entry names the op's dimensions that matter ("axes"): each axis is the list of tensor
dimensions that must keep one size (mm's contraction is dimension 1 of its input and dimension
0 of mat2), written "POS:DIM" where POS is 0 for the sample's input, 1.. for its positional
arguments, a keyword argument's name, or "0.*" for every tensor of an input list (cat, stack).
`reduce` names the axes the op sums or reduces over (its contraction length K, which sets the
tolerance; the tile8192 check scales only these); `index` names integer tensors whose values
index a dimension (regenerated inside it); `shape_args` names arguments that list axis sizes
(layer_norm's normalized_shape); `positive` names inputs that must be positive (variances);
`kwargs` sets keyword arguments a model would use where the samples test odd ones (a negative eps).
Which sample an entry starts from is decided by `match`, a predicate over the sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.opinfo.core import SampleInput

TILES = (128, 512, 2048, 4096)  # partitions, free-dimension chunks, and the sizes above them
CONTRACTION_TILE = 8192  # contraction and reduction lengths go this far


@dataclass(frozen=True)
class Entry:
    axes: dict[str, tuple[str, ...]]
    reduce: tuple[str, ...] = ()
    match: Callable[[SampleInput], bool] = lambda s: True
    index: dict[str, str] = field(default_factory=dict)
    shape_args: dict[str, tuple[str, ...]] = field(default_factory=dict)
    positive: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)  # set on the sample (a model's eps, not a test's)
    indices_dim: Callable[[SampleInput], int] | None = None  # outputs (values, indices) along this dim
    stable_indices: Callable[[SampleInput], bool] = lambda s: False  # indices compared exactly
    accumulates_in_dtype: bool = False  # sums into its output tensor at the dtype (sizes_judge)


def _kw(name: str, value: Any) -> Callable[[SampleInput], bool]:
    return lambda s: s.kwargs.get(name) == value


def _dims(*ndims: int) -> Callable[[SampleInput], bool]:
    """The sample's tensor input and positional tensor arguments have these numbers of dimensions."""
    def match(s: SampleInput) -> bool:
        tensors = [s.input, *[a for a in s.args if isinstance(a, torch.Tensor)]]
        return len(tensors) == len(ndims) and all(
            isinstance(t, torch.Tensor) and t.dim() == n for t, n in zip(tensors, ndims))
    return match


def _both(*predicates: Callable[[SampleInput], bool]) -> Callable[[SampleInput], bool]:
    return lambda s: all(p(s) for p in predicates)


_ELEMENTWISE_BINARY = Entry({"rows": ("0:0", "1:0"), "mid": ("0:1", "1:1"), "cols": ("0:2", "1:2")},
                            match=_both(_dims(3, 3), lambda s: s.input.shape == s.args[0].shape))
_UNARY_1D = Entry({"x": ("0:0",)}, match=_dims(1))
_UNARY_2D = Entry({"rows": ("0:0",), "cols": ("0:1",)}, match=_dims(2))


# OpInfo name -> its entry. Ops models spend their time in: matmuls, reductions, softmax, norms,
# elementwise, convolution, pooling, embedding, gather/scatter/index, attention, cat/stack/split,
# topk/sort.
TABLE: dict[str, Entry] = {
    "mm": Entry({"M": ("0:0",), "K": ("0:1", "1:0"), "N": ("1:1",)}, reduce=("K",), match=_dims(2, 2)),
    "bmm": Entry({"B": ("0:0", "1:0"), "M": ("0:1",), "K": ("0:2", "1:1"), "N": ("1:2",)}, reduce=("K",)),
    "addmm": Entry({"M": ("0:0", "1:0"), "K": ("1:1", "2:0"), "N": ("0:1", "2:1")}, reduce=("K",),
                   match=_dims(2, 2, 2)),
    "matmul": Entry({"M": ("0:0",), "K": ("0:1", "1:0"), "N": ("1:1",)}, reduce=("K",), match=_dims(2, 2)),
    "nn.functional.linear": Entry({"M": ("0:0",), "K": ("0:1", "1:1"), "N": ("1:0", "2:0")}, reduce=("K",),
                                  match=_dims(2, 2, 1)),
    "baddbmm": Entry({"B": ("0:0", "1:0", "2:0"), "M": ("0:1", "1:1"), "K": ("1:2", "2:1"), "N": ("0:2", "2:2")},
                     reduce=("K",), match=_dims(3, 3, 3)),
    "sum": Entry({"x": ("0:0",)}, reduce=("x",), match=_both(_dims(1), lambda s: not s.kwargs)),
    "mean": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("cols",), match=_both(_dims(2), _kw("dim", -1))),
    "amax": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("cols",), match=_both(_dims(2), _kw("dim", -1))),
    "var": Entry({"a": ("0:0",), "b": ("0:1",), "c": ("0:2",)}, reduce=("b",),
                 match=_both(_dims(3), lambda s: s.kwargs.get("dim") == 1)),
    "norm": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("rows", "cols"),
                  match=_both(_dims(2), lambda s: s.args == (2,) and not s.kwargs)),
    "logsumexp": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("cols",),
                       match=_both(_dims(2), lambda s: list(s.args[0]) == [1])),
    "cumsum": Entry({"a": ("0:0",), "b": ("0:1",), "c": ("0:2",)}, reduce=("b",),
                    match=_both(_dims(3), lambda s: s.args == (1,) and not s.kwargs)),
    "softmax": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("cols",),
                     match=_both(_dims(2), lambda s: s.args[0] in (1, -1))),
    "log_softmax": Entry({"rows": ("0:0",), "cols": ("0:1",)}, reduce=("cols",),
                         match=_both(_dims(2), lambda s: s.args[0] in (1, -1))),
    "nn.functional.layer_norm": Entry({"rows": ("0:0",), "mid": ("0:1", "2:0", "3:0"), "hidden": ("0:2", "2:1", "3:1")},
                                      reduce=("mid", "hidden"), shape_args={"1": ("mid", "hidden")},
                                      kwargs={"eps": 1e-5}, match=_dims(3, 2, 2)),
    "nn.functional.rms_norm": Entry({"rows": ("0:0",), "mid": ("0:1", "2:0"), "hidden": ("0:2", "2:1")},
                                    reduce=("mid", "hidden"), shape_args={"1": ("mid", "hidden")},
                                    kwargs={"eps": 1e-5}, match=_dims(3, 2)),
    "nn.functional.group_norm": Entry({"batch": ("0:0",), "length": ("0:2",)}, reduce=("length",),
                                      kwargs={"eps": 1e-5},
                                      match=lambda s: s.input.dim() == 3 and s.input.shape[0] > 1),
    "nn.functional.batch_norm": Entry(
        {"batch": ("0:0",), "channels": ("0:1", "1:0", "2:0", "3:0", "4:0"), "height": ("0:2",), "width": ("0:3",)},
        reduce=("batch", "height", "width"), positive=("2",),
        match=lambda s: s.input.dim() == 4 and s.kwargs.get("training") is True),
    "add": _ELEMENTWISE_BINARY,
    "mul": _ELEMENTWISE_BINARY,
    "div.no_rounding_mode": _ELEMENTWISE_BINARY,
    "where": Entry({"rows": ("0:0", "1:0", "2:0"), "cols": ("0:1", "1:1", "2:1")},
                   match=lambda s: s.input.dim() == 2 and s.args[0].dim() == 2 and s.args[1].dim() == 2),
    "exp": _UNARY_1D,
    "sigmoid": _UNARY_1D,
    "nn.functional.silu": _UNARY_1D,
    "tanh": _UNARY_2D,
    "nn.functional.gelu": Entry({"rows": ("0:0",), "cols": ("0:1",)}, match=_kw("approximate", "tanh")),
    "nn.functional.conv1d": Entry({"in_channels": ("0:1", "1:1"), "out_channels": ("1:0", "2:0"), "length": ("0:2",)},
                                  reduce=("in_channels",),
                                  match=lambda s: s.input.dim() == 3 and s.kwargs.get("groups") == 1),
    "nn.functional.conv2d": Entry({"in_channels": ("0:1", "1:1"), "out_channels": ("1:0", "2:0"),
                                   "height": ("0:2",), "width": ("0:3",)}, reduce=("in_channels",),
                                  match=lambda s: s.input.dim() == 4 and s.kwargs.get("groups") == 1),
    "nn.functional.max_pool2d": Entry({"channels": ("0:1",), "height": ("0:2",), "width": ("0:3",)},
                                      match=_kw("return_indices", False)),
    "nn.functional.avg_pool2d": Entry({"channels": ("0:1",), "height": ("0:2",), "width": ("0:3",)},
                                      match=lambda s: s.args == (3, 3)),
    "nn.functional.embedding": Entry({"vocab": ("0:0",), "hidden": ("0:1",), "tokens": ("1:0",)},
                                     index={"1": "0:0"}, match=_both(_dims(2, 1), lambda s: not s.kwargs)),
    "gather": Entry({"source_rows": ("0:0",), "rows": ("2:0",), "cols": ("0:1", "2:1")}, index={"2": "0:0"},
                    match=lambda s: s.args[0] == 0 and s.input.dim() == 2 and s.args[1].dtype == torch.int64),
    "index_select": Entry({"rows": ("0:0",), "source_cols": ("0:1",), "cols": ("2:0",)}, index={"2": "0:1"},
                          match=lambda s: s.input.dim() == 2),
    "scatter_add": Entry({"rows": ("0:0",), "source_rows": ("2:0", "3:0"), "cols": ("0:1", "2:1", "3:1")},
                         reduce=("source_rows",), index={"2": "0:0"}, accumulates_in_dtype=True,
                         match=lambda s: s.args[0] == 0 and s.input.dim() == 2
                         and s.args[1].shape[0] < s.input.shape[0]),
    "index_add": Entry({"rows": ("0:0", "3:0"), "cols": ("0:1",), "source_cols": ("2:0", "3:1")},
                       reduce=("source_cols",), index={"2": "0:1"}, accumulates_in_dtype=True,
                       match=lambda s: s.input.dim() == 2 and s.kwargs.get("alpha") == 2),
    "nn.functional.scaled_dot_product_attention": Entry(
        {"batch": ("0:0", "1:0", "2:0"), "queries": ("0:1",), "keys": ("1:1", "2:1"), "head_dim": ("0:2", "1:2"),
         "value_dim": ("2:2",)}, reduce=("keys", "head_dim"),
        match=lambda s: s.input.dim() == 3 and s.kwargs.get("dropout_p") == 0.0 and s.kwargs.get("is_causal") is True),
    "cat": Entry({"rows": ("0.*:0",), "cols": ("0.*:1",)},
                 match=lambda s: len(s.input) == 2 and s.input[0].shape == s.input[1].shape == (5, 5)
                 and s.kwargs.get("dim") == 1),
    "stack": Entry({"a": ("0.*:1",), "b": ("0.*:3",)}, match=lambda s: len(s.input) == 3 and s.args == (1,)),
    "split": Entry({"b": ("0:1",), "c": ("0:2",)}, match=lambda s: s.args == (2,)),
    "topk": Entry({"a": ("0:0",), "b": ("0:1",), "c": ("0:2",)}, indices_dim=lambda s: s.args[1],
                  match=lambda s: s.args == (3, 1)),
    "sort": Entry({"a": ("0:0",), "b": ("0:1",), "c": ("0:2",)}, indices_dim=lambda s: s.kwargs["dim"],
                  stable_indices=lambda s: s.kwargs["stable"],
                  match=lambda s: s.input.dim() == 3 and s.kwargs.get("stable") is True),
}


# --- positions ---------------------------------------------------------------------------------

def _get(sample: SampleInput, pos: str) -> Any:
    if pos == "0":
        return sample.input
    if pos.isdigit():
        return sample.args[int(pos) - 1]
    return sample.kwargs[pos]


def _tensors_at(sample: SampleInput, pos: str) -> list[torch.Tensor]:
    if pos == "0.*":
        return list(sample.input)
    value = _get(sample, pos)
    return [value] if isinstance(value, torch.Tensor) else []


def _ref(ref: str) -> tuple[str, int]:
    pos, dim = ref.rsplit(":", 1)
    return pos, int(dim)


def fits(entry: Entry, sample: SampleInput) -> bool:
    """Whether every tensor dimension the entry names exists, has at least 2 elements, and the
    dimensions of one axis agree in size."""
    try:
        if not entry.match(sample):
            return False
        for refs in entry.axes.values():
            sizes = set()
            for ref in refs:
                pos, dim = _ref(ref)
                tensors = _tensors_at(sample, pos)
                if not tensors or any(t.layout != torch.strided or not -t.dim() <= dim < t.dim() for t in tensors):
                    return False
                sizes |= {t.shape[dim] for t in tensors}
            if len(sizes) != 1 or min(sizes) < 2:
                return False
        return True
    except (IndexError, KeyError, TypeError, AttributeError):
        return False


@dataclass
class Scaled:
    """One input the check runs: the sample with `axis` at `size`, in `layout`."""
    axis: str
    size: int
    layout: str
    sample: SampleInput
    reduction_length: int  # K: how many terms an output element sums or reduces over

    @property
    def name(self) -> str:
        return f"{self.axis}={self.size} {self.layout}"


def axis_sizes(entry: Entry, sample: SampleInput) -> dict[str, int]:
    out = {}
    for name, refs in entry.axes.items():
        pos, dim = _ref(refs[0])
        out[name] = _tensors_at(sample, pos)[0].shape[dim]
    return out


def scaled(entry: Entry, sample: SampleInput, axis: str, size: int, layout: str, dtype: torch.dtype,
           generator: torch.Generator) -> Scaled:
    """The sample with `axis` at `size`: every tensor drawn anew at its new shape (floating values
    standard normal, rounded to dtype; indices uniform over the dimension they index; masks
    fair coins), in `layout` ("contiguous", or "transposed": every tensor of two or more
    dimensions stored with its last two dimensions swapped)."""
    sizes = {**axis_sizes(entry, sample), axis: size}
    new_shapes: dict[int, list[int]] = {}  # id(tensor) -> shape
    for name, refs in entry.axes.items():
        for ref in refs:
            pos, dim = _ref(ref)
            for t in _tensors_at(sample, pos):
                shape = new_shapes.setdefault(id(t), list(t.shape))
                shape[dim] = sizes[name]
    index_bounds: dict[int, int] = {}
    for pos, target in entry.index.items():
        tpos, tdim = _ref(target)
        bound = new_shapes.get(id(_tensors_at(sample, tpos)[0]), list(_tensors_at(sample, tpos)[0].shape))[tdim]
        for t in _tensors_at(sample, pos):
            index_bounds[id(t)] = bound
    positive = {id(t) for pos in entry.positive for t in _tensors_at(sample, pos)}

    def draw(t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
            return t
        shape = new_shapes.get(id(t), list(t.shape))
        if id(t) in index_bounds:
            new = torch.randint(0, index_bounds[id(t)], shape, generator=generator, dtype=torch.int64).to(t.dtype)
        elif t.dtype == torch.bool:
            new = torch.rand(shape, generator=generator) < 0.5
        elif t.dtype.is_floating_point:
            new = torch.randn(shape, generator=generator, dtype=torch.float64)
            new = (new.abs() + 0.5 if id(t) in positive else new).to(dtype)
        else:
            high = int(t.max()) + 1 if t.numel() else 2
            new = torch.randint(0, max(high, 1), shape, generator=generator, dtype=torch.int64).to(t.dtype)
        if layout == "transposed" and new.dim() >= 2:
            new = new.mT.contiguous().mT
        return new

    new_sample = sample.transform(draw)
    if entry.shape_args or entry.kwargs:
        args = list(new_sample.args)
        for pos, names in entry.shape_args.items():
            args[int(pos) - 1] = [sizes[n] for n in names]
        new_sample = SampleInput(new_sample.input, args=tuple(args), kwargs={**new_sample.kwargs, **entry.kwargs},
                                 output_process_fn_grad=sample.output_process_fn_grad)
    k = 1
    for name in entry.reduce:
        k *= sizes[name]
    return Scaled(axis, size, layout, new_sample, k)


def inputs(entry: Entry, sample: SampleInput, tile: int, dtype: torch.dtype, seed: int) -> Iterator[Scaled]:
    """Every input of one tile check: each axis (each reduction axis only, for the contraction
    tile) at tile-1, tile and tile+1, contiguous then transposed (when a tensor has two or more
    dimensions)."""
    axes = entry.reduce if tile == CONTRACTION_TILE else tuple(entry.axes)
    has_matrix = any(isinstance(t, torch.Tensor) and t.dim() >= 2 for t in _all_tensors(sample))
    layouts = ("contiguous", "transposed") if has_matrix else ("contiguous",)
    generator = torch.Generator().manual_seed(seed)
    for axis in axes:
        for size in (tile - 1, tile, tile + 1):
            for layout in layouts:
                yield scaled(entry, sample, axis, size, layout, dtype, generator)


def _all_tensors(sample: SampleInput) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if isinstance(t, torch.Tensor)]


# The op families (bench-sizes' time per family; the `family` of each case's evidence).
FAMILIES: dict[str, tuple[str, ...]] = {
    "matmul": ("mm", "bmm", "addmm", "matmul", "nn.functional.linear", "baddbmm"),
    "reduction": ("sum", "mean", "amax", "var", "norm", "logsumexp", "cumsum"),
    "softmax": ("softmax", "log_softmax"),
    "normalization": ("nn.functional.layer_norm", "nn.functional.rms_norm", "nn.functional.group_norm",
                      "nn.functional.batch_norm"),
    "elementwise": ("add", "mul", "div.no_rounding_mode", "where", "exp", "sigmoid", "nn.functional.silu", "tanh",
                    "nn.functional.gelu"),
    "convolution": ("nn.functional.conv1d", "nn.functional.conv2d"),
    "pooling": ("nn.functional.max_pool2d", "nn.functional.avg_pool2d"),
    "indexing": ("nn.functional.embedding", "gather", "index_select", "scatter_add", "index_add"),
    "attention": ("nn.functional.scaled_dot_product_attention",),
    "shape": ("cat", "stack", "split"),
    "selection": ("topk", "sort"),
}


def family(subject: str) -> str:
    return next(name for name, members in FAMILIES.items() if subject in members)
