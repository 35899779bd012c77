"""--shapes, --seq-lens and --batch-sizes: the tiny model run at each input shape, eager and/or
compiled, and what its new executables or graphs cost, with the shapes grouped into buckets
(serving every shape padded to its bucket's costs only the buckets')."""

from __future__ import annotations

import math
from typing import Any, Callable

from case_context import Context, compile_cache_delta, compile_estimate, declared_compile_latency, estimated_seconds
from vocabulary import Outcome

from .calls import call
from .fatal import Fatal
from .placement import placed

Shape = tuple[int, ...]


def parse_shapes(text: str) -> list[Shape]:
    """'2x16,2x32' -> [(2, 16), (2, 32)]; Fatal naming what does not parse."""
    shapes = []
    for item in text.split(","):
        dims = item.strip().lower().split("x")
        if not item.strip() or not all(d.isdigit() and int(d) > 0 for d in dims):
            raise Fatal(f"--shapes {text}: '{item}' is not a shape "
                        f"(positive sizes joined by x, shapes by commas: 2x16,2x32)")
        shapes.append(tuple(int(d) for d in dims))
    if len({len(s) for s in shapes}) != 1:
        raise Fatal(f"--shapes {text}: every shape needs the same number of dimensions")
    return shapes


def numel(shape: Shape) -> int:
    return math.prod(shape)


def buckets(shapes: list[Shape]) -> dict[Shape, Shape]:
    """Each shape's bucket: fewest buckets, each one of the shapes, covering the others with at most
    2x padding (every dimension at most the bucket's, the bucket at most twice the elements). From
    the smallest shape not yet covered, the largest shape that covers it: optimal in one dimension
    (sequence lengths), a greedy cover in more."""
    def covers(bucket, shape) -> bool:
        return all(b >= s for b, s in zip(bucket, shape)) and numel(bucket) <= 2 * numel(shape)

    remaining = sorted(set(shapes), key=lambda s: (numel(s), s))
    assigned: dict[Shape, Shape] = {}
    while remaining:
        bucket = max((c for c in remaining if covers(c, remaining[0])), key=lambda s: (numel(s), s))
        for shape in remaining:
            if covers(bucket, shape):
                assigned[shape] = bucket
        remaining = [s for s in remaining if s not in assigned]
    return assigned


def with_shape(inputs, shape: Shape):
    """The inputs with their first tensor replaced by one of `shape` (same dtype: random values, or
    integers within the original's range)."""
    import torch
    from torch.utils._pytree import tree_flatten, tree_unflatten

    leaves, spec = tree_flatten(inputs)
    index = next((i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)), None)
    if index is None:
        raise Fatal("--shapes: the model's inputs hold no tensor to reshape")
    old = leaves[index]
    if len(shape) != old.dim():
        raise Fatal(f"--shapes: {'x'.join(map(str, shape))} has {len(shape)} dimensions, the model's first input "
                    f"{list(old.shape)} has {old.dim()}")
    g = torch.Generator().manual_seed(0)
    if old.is_floating_point():
        leaves[index] = torch.randn(shape, generator=g).to(old.dtype)
    else:
        high = int(old.max()) + 1 if old.numel() else 2
        leaves[index] = torch.randint(0, max(high, 1), shape, generator=g, dtype=old.dtype)
    return tree_unflatten(leaves, spec)


def input_maker(hf: bool, example_inputs) -> Callable[[Shape], Any]:
    """The model's inputs at a shape: for --hf, (batch, sequence length) as the hf suite makes its
    inputs; for --script, the function's inputs with their first tensor reshaped (with_shape)."""
    if hf:
        from suitelib.tiny_models import inputs as hf_inputs

        return lambda shape: hf_inputs(0, seq=shape[1], batch=shape[0])
    return lambda shape: with_shape(example_inputs, shape)


def shapes_check(rebuild_tiny, make_inputs: Callable[[Shape], Any], shapes: list[Shape], backend, device: str,
                 eager: bool, compiled: bool) -> dict[str, Any]:
    """Runs the tiny model at each shape, on the device (eager: the backend's new executables, compiles
    and disk-cache loads, per its compile_cache_stats()) and/or under torch.compile (static shapes: the
    graphs compiled), the buckets' shapes first: what they cost is what serving every shape padded to
    its bucket costs; each other shape then adds what it needs beyond them."""
    import torch

    import compilation
    from comparison import to_device

    assigned = buckets(shapes)
    chosen = sorted(set(assigned.values()), key=lambda s: (numel(s), s))
    order = chosen + [s for s in sorted(set(shapes), key=lambda s: (numel(s), s)) if s not in chosen]
    ctx = Context(backend, device, 0)
    declared = declared_compile_latency(backend)
    model = placed(rebuild_tiny, device, None)[0]
    counted = None
    if compiled:
        if missing := compilation.missing_backend():
            raise Fatal(f"--compile: {missing}")
        compilation.reset()
        import torch._dynamo

        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, len(order) + 1)
        counted = compilation.CountedBackend()
        compiled_model = torch.compile(model, backend=counted, dynamic=False)
    rows = []
    for shape in order:
        row: dict[str, Any] = {"shape": list(shape), "bucket": list(assigned[shape]), "is_bucket": shape in chosen}
        inputs = to_device(make_inputs(shape), device)
        try:
            with torch.no_grad():
                if eager:
                    before = ctx.compile_cache()
                    call(model, inputs)
                    after = ctx.compile_cache()
                    delta = compile_cache_delta(before, after) if after else None
                    row["executables"] = delta["compiles"] + delta.get("disk_hits", 0) if delta else None
                    if delta:
                        row.update(from_cache=delta.get("disk_hits", 0),
                                   compile_seconds=delta.get("compile_seconds", 0.0))
                    if delta and (estimate := compile_estimate(delta, declared)):  # as `executables`: the cache's too
                        row["estimated_compile_seconds"] = estimate["cold_seconds"]
                if counted is not None:
                    graphs, ops = counted.graphs, counted.ops
                    call(compiled_model, inputs)
                    row["graphs"] = counted.graphs - graphs
                    if declared:
                        row["estimated_graph_compile_seconds"] = estimated_seconds(row["graphs"], counted.ops - ops,
                                                                                   declared)
            row["outcome"] = "ran"
        except Exception as exc:
            row.update(outcome=Outcome.ERROR, message=f"{type(exc).__name__}: {str(exc)[:300]}")
        rows.append(row)

    def total(key: str, only_buckets: bool = False) -> int | None:
        values = [r.get(key) for r in rows if not only_buckets or r["is_bucket"]]
        return None if any(v is None for v in values) or not values else sum(values)

    kinds = (["executables"] if eager else []) + (["graphs"] if compiled else [])
    kinds += [k for k in ("estimated_compile_seconds", "estimated_graph_compile_seconds") if any(k in r for r in rows)]
    return {"shapes": rows, "buckets": [list(b) for b in chosen], "declared_compile_latency": declared,
            "total": {k: total(k) for k in kinds}, "bucketed": {k: total(k, True) for k in kinds},
            "tracking": bool(ctx.compile_cache()) or not eager}
