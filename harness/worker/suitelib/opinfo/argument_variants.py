"""Argument coverage: the arguments an OpInfo's samples never move off their default get variant
samples with other valid values, which the forward and backward checks run like any sample
(torch 2.13's samples for nn.functional.embedding never pass padding_idx, so a gradient that
ignores it would pass unseen).

Which arguments: the op's Python signature (inspect.signature for Python functions such as
torch.nn.functional.*, else the aten schema of its aten name) minus those any sample passes,
by keyword or by position. Which values: by the argument's name (BY_NAME: a rule that holds for
every op using the name, such as `reduction` or a boolean flag), or from the reviewed per-op
table (BY_OP) where the name alone cannot say what is valid. A value the CPU refuses for a
sample is no reference (counted, not judged). Evidence names the argument and value
(`variant`: "argument padding_idx=0").
"""

from __future__ import annotations

import inspect
from typing import Any, Iterator

import torch
from torch.testing._internal.opinfo.core import SampleInput

from suitelib.opinfo import sample_variants

_UNSET = object()

# Arguments whose other values change what is computed, by name, for every op: default -> others.
BY_NAME: dict[str, Any] = {
    "reduction": lambda d: [v for v in ("mean", "sum", "none") if v != d],
    "approximate": lambda d: ["tanh"] if d == "none" else [],
    "alpha": lambda d: [0.5] if isinstance(d, (int, float)) and not isinstance(d, bool) else [],
    "beta": lambda d: [0.5] if isinstance(d, (int, float)) and not isinstance(d, bool) else [],
    "negative_slope": lambda d: [0.2] if isinstance(d, float) else [],
    "label_smoothing": lambda d: [0.1] if d == 0.0 else [],
    "ignore_index": lambda d: [0] if d == -100 else [],
    "keepdim": lambda d: [not d] if isinstance(d, bool) else [],
    "ceil_mode": lambda d: [not d] if isinstance(d, bool) else [],
    "count_include_pad": lambda d: [not d] if isinstance(d, bool) else [],
    "scale_grad_by_freq": lambda d: [not d] if isinstance(d, bool) else [],
    "align_corners": lambda d: [True] if d in (None, False) else [],
    "unbiased": lambda d: [not d] if isinstance(d, bool) else [],
    "correction": lambda d: [0] if d in (None, 1) else [],
    "log_target": lambda d: [not d] if isinstance(d, bool) else [],
    "full": lambda d: [not d] if isinstance(d, bool) else [],
    "upper": lambda d: [not d] if isinstance(d, bool) else [],
    "largest": lambda d: [not d] if isinstance(d, bool) else [],
    "descending": lambda d: [not d] if isinstance(d, bool) else [],
    "stable": lambda d: [not d] if isinstance(d, bool) else [],
    "divisor_override": lambda d: [3] if d is None else [],
    "dim": lambda d: [0] if d is None else [],  # a reduction over every dimension, then over one
}

# Per-op values where the name says too little (reviewed against torch 2.13's op_db).
BY_OP: dict[str, dict[str, list[Any]]] = {
    "nn.functional.embedding": {"padding_idx": [0, -1], "max_norm": [1.0], "norm_type": [1.0]},
    "nn.functional.embedding_bag": {"padding_idx": [0], "max_norm": [1.0]},
    "nn.functional.gelu": {"approximate": ["tanh"]},
    "nn.functional.elu": {"alpha": [0.5]},
    "nn.functional.celu": {"alpha": [0.5]},
    "nn.functional.softplus": {"beta": [2.0], "threshold": [1.0]},
    "nn.functional.hardtanh": {"min_val": [-0.5], "max_val": [0.5]},
    "nn.functional.leaky_relu": {"negative_slope": [0.2]},
    "nn.functional.rrelu": {"training": [True]},
    "nn.functional.cross_entropy": {"label_smoothing": [0.1], "ignore_index": [0]},
    "nn.functional.nll_loss": {"ignore_index": [0]},
    "nn.functional.smooth_l1_loss": {"beta": [0.5]},
    "nn.functional.huber_loss": {"delta": [0.5]},
    "nn.functional.normalize": {"p": [1.0], "dim": [0]},
    "nn.functional.pdist": {"p": [1.0]},
    "cdist": {"p": [1.0]},
    "nn.functional.glu": {"dim": [0]},
    "nn.functional.softmax": {"dim": [0]},
    "nn.functional.log_softmax": {"dim": [0]},
    "nn.functional.batch_norm": {"training": [True], "momentum": [0.5]},
    "nn.functional.instance_norm": {"use_input_stats": [False]},
    "nn.functional.dropout": {"training": [False]},
    "cumsum": {"dim": [0]},
    "logsumexp": {"keepdim": [True]},
}

# Never varied: they change where or how a result is stored, not what is computed (a sparse
# gradient is the sparse skip lists' business).
_NOT_VARIED = {"out", "inplace", "dtype", "device", "layout", "pin_memory", "memory_format", "generator",
               "requires_grad", "names", "self", "input", "sparse"}


def _signature_parameters(function) -> list[tuple[str, Any]] | None:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) for p in parameters):
        return None  # a wrapper (`lambda weight, idx, **kwargs: F.embedding(idx, weight, **kwargs)`)
    return [(p.name, p.default if p.default is not inspect.Parameter.empty else _UNSET) for p in parameters]


def _python_parameters(op) -> list[tuple[str, Any]] | None:
    """(name, default) of every parameter of the op's Python callable, in order, or of the
    function its name names (torch.nn.functional.embedding) when the callable is a wrapper;
    None where neither has a Python signature (a builtin)."""
    found = _signature_parameters(op.op)
    if found is None:
        named: Any = torch
        for part in op.name.split("."):
            named = getattr(named, part, None)
        found = _signature_parameters(named) if callable(named) else None
    return found


def _schema_parameters(op) -> list[tuple[str, Any]] | None:
    """(name, default) of the aten schema's arguments, when every schema of the op's aten name
    agrees on the names (overloads that do not would make positions ambiguous)."""
    schemas = [s for name in {op.aten_name, op.name.split(".")[-1]}
               for s in _schemas(name) if not any(a.is_out for a in s.arguments)]
    if not schemas:
        return None
    longest = max(schemas, key=lambda s: len(s.arguments))
    return [(a.name, a.default_value if a.has_default_value() else _UNSET) for a in longest.arguments]


def _schemas(name: str) -> list:
    try:
        return torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return []


def parameters(op) -> list[tuple[str, Any]]:
    return _python_parameters(op) or _schema_parameters(op) or []


def never_moved(op, samples: list[SampleInput]) -> dict[str, Any]:
    """The op's arguments with a default that no sample passes: name -> default."""
    params = parameters(op)
    passed: set[str] = set()
    for sample in samples:
        passed |= set(sample.kwargs)
        passed |= {name for name, _ in params[1:1 + len(sample.args)]}
    return {name: default for name, default in params[1:]
            if default is not _UNSET and name not in passed and name not in _NOT_VARIED}


def values_for(op, name: str, default: Any) -> list[Any]:
    """The other values the argument is tried with: the per-op table's, else the name's rule."""
    if name in BY_OP.get(op.name, {}):
        return BY_OP[op.name][name]
    rule = BY_NAME.get(name)
    return rule(default) if rule else []


def variants(op, samples: list[SampleInput], per_value: int = 3) -> Iterator[tuple[int, str, SampleInput]]:
    """(sample index, "argument NAME=VALUE", variant) for every never-moved argument with other
    values, each value on the first `per_value` samples of distinct shapes."""
    moved = {name: values_for(op, name, default) for name, default in never_moved(op, samples).items()}
    moved = {name: values for name, values in moved.items() if values}
    if not moved:
        return
    chosen, seen = [], set()
    for index, sample in enumerate(samples):
        if (signature := sample_variants.signature(sample)) not in seen:
            seen.add(signature)
            chosen.append((index, sample))
        if len(chosen) == per_value:
            break
    for name, values in moved.items():
        for value in values:
            for index, sample in chosen:
                yield index, f"argument {name}={value!r}", sample_variants.rebuilt(sample, kwargs={**sample.kwargs, name: value})
