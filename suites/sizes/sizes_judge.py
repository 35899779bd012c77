"""How the sizes suite judges one call: the device's result against a float64 reference computed
on the CPU from the same inputs (already rounded to the dtype), with a tolerance that grows with
the number K of terms behind each output element the way floating-point error grows.

For every element of an output, with ref the float64 reference:

    |device - ref| <= C * max|ref| * (eps(dtype) + eps(acc) * sqrt(K)),  C = 4

- max|ref|: the output's scale (the largest finite magnitude of that output tensor): the bound
  is normwise, as matrix-product error analysis states it (|C - C'| <= c(K) eps |A||B|), because
  a composite rounds its intermediates at the dtype (batch_norm's x_hat * w + b, logsumexp's
  max + log(sum)), whose errors follow the intermediates' magnitude, not the result's;
- eps(dtype): the machine epsilon of the result's dtype (torch.finfo(dtype).eps): rounding the
  result and a composite's intermediates;
- eps(acc): that of the accumulation dtype: float32 for float32, bfloat16 and float16 (what the
  CPU's kernels and an accelerator's engines accumulate in), float64 for float64, and the dtype
  itself for ops that accumulate into their output tensor (index_add, scatter_add);
- sqrt(K): rounding errors of a sum of K terms of random sign add up like a random walk (the
  probabilistic bound; the worst case grows like K, which no kernel reaches on such data); K is
  the number of terms behind each element (the contraction or reduction length; 1 elementwise).

A dropped or repeated tile changes the elements it feeds by the contribution of a whole tile, a
large fraction of the output's scale (the n-1 and n+1 sizes leave a partial tile of n-1 or one
element), far above the bound at every dtype. The check also runs the CPU's own kernel at the
dtype on the same inputs: an element is within bound too where the device's error is at most
twice the CPU's there, so a device is never held to more than PyTorch's own kernel achieves; the
CPU's ratio against the formula alone is recorded (`cpu_formula_ratio`), which shows where the
formula holds for a correct kernel without that floor.
Non-finite elements must match exactly (NaN where the reference has NaN, infinities by sign);
integer outputs (indices) must equal the CPU's, or, for the indices of a selection (sort, topk),
pick the values the device returned.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.utils._pytree as pytree

from evidence import dtype_name

C = 4.0
FORMULA = ("|device - ref| <= C * max|ref| * (eps(dtype) + eps(acc) * sqrt(K)), C = 4, acc = float32 (float64 for "
           "float64; the dtype for ops accumulating into their output)")


class Wrong(Exception):
    """The device's result is not the reference's; `errors` holds what was measured."""

    def __init__(self, message: str, errors: dict[str, Any]) -> None:
        super().__init__(message)
        self.errors = errors


def accumulation_eps(dtype: torch.dtype, in_dtype: bool = False) -> float:
    if in_dtype:
        return torch.finfo(dtype).eps
    return torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps


def bound(ref: torch.Tensor, dtype: torch.dtype, k: int, accumulates_in_dtype: bool = False) -> float:
    """The formula's bound on every element's error, for an output of `dtype` whose elements
    each come from K terms."""
    finite = ref[torch.isfinite(ref)]
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    return C * scale * (torch.finfo(dtype).eps + accumulation_eps(dtype, accumulates_in_dtype) * math.sqrt(max(k, 1)))


def _floating(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def judge(device: Any, reference: Any, cpu: Any, *, dtype: torch.dtype, k: int,
          selection: tuple[torch.Tensor, int] | None = None, accumulates_in_dtype: bool = False) -> dict[str, Any]:
    """Compares the device's outputs (moved to the CPU) with the float64 reference and the CPU's
    outputs at `dtype`, pytrees alike. Returns the errors (max_abs_error, tolerance_ratio: the
    largest error over its bound, bound: the formula's, the largest over the outputs,
    cpu_formula_ratio); raises Wrong when an element is outside its bound. `selection` =
    (input, dim) for ops returning (values, indices) of a selection."""
    d_leaves, d_spec = pytree.tree_flatten(device)
    r_leaves, r_spec = pytree.tree_flatten(reference)
    c_leaves, _ = pytree.tree_flatten(cpu)
    if d_spec != r_spec:
        raise Wrong(f"output structure {d_spec} on the device, {r_spec} in the reference", {})
    worst = {"max_abs_error": 0.0, "max_rel_error": 0.0, "tolerance_ratio": 0.0, "cpu_formula_ratio": 0.0}
    for i, (d, r, c) in enumerate(zip(d_leaves, r_leaves, c_leaves)):
        if not isinstance(r, torch.Tensor):
            if d != r:
                raise Wrong(f"output {i}: {d!r} on the device, {r!r} in the reference", worst)
            continue
        if not isinstance(d, torch.Tensor) or d.shape != r.shape:
            got = f"{dtype_name(d.dtype)}{list(d.shape)}" if isinstance(d, torch.Tensor) else type(d).__name__
            raise Wrong(f"output {i}: {got} on the device, shape {list(r.shape)} in the reference", worst)
        if not _floating(r):
            _judge_integers(i, d, c, selection, d_leaves[0] if selection else None, worst)
            continue
        if d.dtype != c.dtype:
            raise Wrong(f"output {i}: dtype {dtype_name(d.dtype)} on the device, {dtype_name(c.dtype)} on the CPU",
                        worst)
        _judge_floating(i, d.to(torch.float64), r.to(torch.float64), c.to(torch.float64),
                        bound(r, d.dtype, k, accumulates_in_dtype), d.dtype, k, worst)
    return worst


def _judge_floating(i: int, d: torch.Tensor, r: torch.Tensor, c: torch.Tensor, formula: float, dtype: torch.dtype,
                    k: int, worst: dict[str, Any]) -> None:
    finite = torch.isfinite(r) & torch.isfinite(d)
    both_nan = torch.isnan(r) & torch.isnan(d)
    same_inf = torch.isinf(r) & (d == r)
    if not bool((finite | both_nan | same_inf).all()):
        where = (~(finite | both_nan | same_inf)).nonzero()[0].tolist()
        raise Wrong(f"output {i}: at {where} the device gives {float(d[tuple(where)])}, the reference "
                    f"{float(r[tuple(where)])} (non-finite values must match)", worst)
    err = (d - r).abs().masked_fill_(~finite, 0.0)
    cpu_err = (c - r).abs().masked_fill_(~(torch.isfinite(c) & torch.isfinite(r)), 0.0)
    allowed = (2.0 * cpu_err).clamp_min_(formula)
    ratio = _max_ratio(err, allowed)
    worst["max_abs_error"] = max(worst["max_abs_error"], float(err.max()) if err.numel() else 0.0)
    worst["max_rel_error"] = max(worst["max_rel_error"], _max_ratio(err, r.abs().masked_fill_(~finite, 1.0)))
    worst["tolerance_ratio"] = max(worst["tolerance_ratio"], ratio)
    worst["bound"] = max(worst.get("bound", 0.0), formula)
    worst["cpu_formula_ratio"] = max(worst["cpu_formula_ratio"], _max_ratio(cpu_err, torch.full_like(cpu_err, formula)))
    if ratio > 1.0:
        worst_at = torch.unravel_index(torch.argmax(_ratios(err, allowed)), err.shape)
        at = tuple(int(x) for x in worst_at) if err.dim() else ()
        raise Wrong(f"output {i}: error {float(err[at]):.4g} at {list(at)} (device {float(d[at]):.6g}, float64 "
                    f"reference {float(r[at]):.6g}) exceeds its bound {float(allowed[at]):.4g} ({ratio:.3g} times; "
                    f"K = {k}, {dtype_name(dtype)})", worst)


def _ratios(err: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    return torch.where(allowed > 0, err / allowed.clamp_min(1e-300), torch.where(err > 0, math.inf, 0.0))


def _max_ratio(err: torch.Tensor, allowed: torch.Tensor) -> float:
    return float(_ratios(err, allowed).max()) if err.numel() else 0.0


def _judge_integers(i: int, d: torch.Tensor, c: torch.Tensor, selection, values, worst) -> None:
    if selection is not None and values is not None:
        source, dim = selection
        picked = torch.gather(source.detach().cpu(), dim, d.to(torch.int64))
        if not torch.equal(picked, values.detach().cpu()):
            raise Wrong(f"output {i}: the device's indices do not pick the values it returned", worst)
        return
    if not torch.equal(d, c):
        where = (d != c).nonzero()[0].tolist() if d.shape == c.shape else []
        raise Wrong(f"output {i}: integer output differs from the CPU's at {where}", worst)
