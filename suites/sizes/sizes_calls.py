"""One call of the sizes suite: an op at one shape, its inputs drawn (or given), run on the device,
judged against the float64 reference (sizes_judge), within the case's memory bound.

Memory: before anything is allocated, a call's bytes are estimated from its shapes on the meta
device (inputs on the CPU and on the device, the output on both, the float64 reference's copies
of the inputs and of the output). A call over the bound whose size can be cut (a vocabulary) is
cut to the largest size that fits, kept past the largest tile (recorded in `reduced`); any other
call over the bound is not run (recorded in `not_run`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from comparison import to_device
from dispatch_capture import uncounted
from .sizes_judge import judge

ROW_TILE = 128  # rows the reference checks: both sides of every multiple of it, first and last


@dataclass
class Rows:
    """The reference is computed for some rows only: of argument `arg` along `dim`, which are the
    output's rows along `out_dim` (a linear layer's tokens). `prepare(args, rows)` adapts the
    arguments to the subset (a causal mask for those queries)."""
    arg: int
    dim: int
    out_dim: int
    prepare: Callable[[tuple, torch.Tensor], tuple] | None = None


@dataclass
class Call:
    name: str
    fn: Callable[..., Any]
    shapes: list[tuple[int, ...]]  # argument shapes, drawn at the case's dtype (unless `given`)
    k: int  # terms behind each output element (sizes_judge)
    rows: Rows | None = None
    index: dict[int, int] = field(default_factory=dict)  # argument -> bound: int64 indices below it
    given: tuple[tuple, dict] | None = None  # ready-made (args, kwargs)
    selection: tuple[int, int] | None = None  # (argument, dim): outputs are (values, indices) picked from it
    shrink: tuple[str, int, int, Callable[[int], "Call"]] | None = None  # (label, size, floor, rebuild)
    accumulates_in_dtype: bool = False  # sums into its output tensor at the dtype (sizes_judge)

    def make(self, dtype: torch.dtype, device: str, generator: torch.Generator | None) -> tuple[tuple, dict]:
        if self.given is not None:
            args, kwargs = self.given
            return pytree.tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) and device == "meta" else t,
                                   (args, kwargs))
        args = []
        for i, shape in enumerate(self.shapes):
            if i in self.index:
                args.append(torch.randint(0, self.index[i], shape, dtype=torch.int64, device=device,
                                          generator=generator))
            elif device == "meta":
                args.append(torch.empty(shape, dtype=dtype, device="meta"))
            else:
                args.append(torch.randn(shape, generator=generator, dtype=torch.float32).to(dtype))
        return tuple(args), {}


def _nbytes(tree: Any) -> int:
    return sum(t.numel() * t.element_size() for t in pytree.tree_leaves(tree) if isinstance(t, torch.Tensor))


def estimate(call: Call, dtype: torch.dtype) -> int:
    """Bytes the call allocates at most: inputs twice (CPU, device), outputs three times (device,
    its copy on the CPU, the CPU's own), and the float64 reference's inputs and output."""
    args, kwargs = call.make(dtype, "meta", None)
    inputs = _nbytes((args, kwargs))
    try:
        outputs = _nbytes(call.fn(*args, **kwargs))
    except Exception:  # no meta kernel: assume an output as large as the largest input
        outputs = max((_nbytes(t) for t in pytree.tree_leaves((args, kwargs))), default=0)
    widen = 8 / dtype.itemsize
    return int(inputs * (2 + widen) + outputs * (3 + widen))


def fit(call: Call, dtype: torch.dtype, limit: int) -> tuple[Call | None, int, str | None]:
    """The call as it runs under `limit` bytes and its estimate: itself, a cut copy (and what was
    cut), or None (and why) when nothing fits."""
    need = estimate(call, dtype)
    if need <= limit:
        return call, need, None
    if call.shrink is None:
        return None, need, f"{call.name}: needs about {need / 2**30:.2f} GiB, over the case's memory bound"
    label, size, floor, rebuild = call.shrink
    half = estimate(rebuild(size // 2), dtype)
    per_unit = (need - half) / (size - size // 2)
    fits = int((limit - (need - per_unit * size)) / per_unit)
    cut = (fits // 4096) * 4096 + 1  # a partial last tile for every tile size
    if cut < floor or cut >= size:
        return None, need, f"{call.name}: {label} {size} cannot be cut to fit the case's memory bound"
    cut_call = rebuild(cut)
    return cut_call, estimate(cut_call, dtype), f"{call.name}: {label} {size} -> {cut}"


def checked_rows(total: int, generator: torch.Generator) -> torch.Tensor:
    """The rows the reference checks: the first and last, both sides of each multiple of
    ROW_TILE, and eight more at random."""
    picked = {0, total - 1}
    for m in range(ROW_TILE, total, ROW_TILE):
        picked |= {m - 1, m}
    picked |= set(torch.randint(0, total, (8,), generator=generator).tolist())
    return torch.tensor(sorted(picked))


def _widened(tree: Any) -> Any:
    return pytree.tree_map(
        lambda t: t.to(torch.float64) if isinstance(t, torch.Tensor) and t.dtype.is_floating_point else t, tree)


class DeviceRaised(Exception):
    """The device raised running the call (the exception is the cause)."""


def run(call: Call, dtype: torch.dtype, device: str, seed: int, device_module: Any) -> dict[str, Any]:
    """Runs the call on the device and judges it; returns what was measured, raises
    sizes_judge.Wrong or DeviceRaised."""
    generator = torch.Generator().manual_seed(seed + zlib.crc32(call.name.encode()))
    args, kwargs = call.make(dtype, "cpu", generator)
    on_device_args, on_device_kwargs = to_device((args, kwargs), device)
    if hasattr(device_module, "reset_peak_memory_stats"):
        device_module.reset_peak_memory_stats()
    try:
        result = call.fn(*on_device_args, **on_device_kwargs)
        with uncounted():  # the result copied back by the harness: no op of the case's
            result = pytree.tree_map(lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, result)
    except Exception as exc:
        raise DeviceRaised(str(exc)) from exc
    peak = int(device_module.max_memory_allocated()) if hasattr(device_module, "max_memory_allocated") else None
    del on_device_args, on_device_kwargs
    if hasattr(device_module, "empty_cache"):
        # The blocks the call freed go back before the CPU reference, which needs as much again in
        # float64: on an emulated device they are host memory, and a worker whose cache still held
        # an earlier case's blocks ran out of it on the largest cases.
        device_module.empty_cache()
    if call.rows is not None:
        rows = call.rows
        picked = checked_rows(args[rows.arg].shape[rows.dim], generator)
        sub = list(args)
        sub[rows.arg] = args[rows.arg].index_select(rows.dim, picked)
        args = rows.prepare(tuple(sub), picked) if rows.prepare else tuple(sub)
        result = pytree.tree_map(
            lambda t: t.index_select(rows.out_dim, picked) if isinstance(t, torch.Tensor) else t, result)
    reference = call.fn(*_widened(args), **_widened(kwargs))
    cpu = call.fn(*args, **kwargs)
    selection = (args[call.selection[0]], call.selection[1]) if call.selection else None
    measured = judge(result, reference, cpu, dtype=dtype, k=call.k, selection=selection,
                     accumulates_in_dtype=call.accumulates_in_dtype)
    measured["K"] = call.k
    if call.rows is not None:
        measured["rows_checked"] = int(picked.numel())
    if peak is not None:
        measured["peak_device_memory"] = peak
    return measured
