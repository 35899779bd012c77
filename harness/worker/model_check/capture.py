"""Which aten ops a model uses, without running it: each op overload captured under a
TorchDispatchMode while the model runs on meta tensors (forward, and with --train backward), or
read from an exported program's graph; a composite op replayed once on the device to see what it
really asks the device to run."""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

from case_context import Context
from dispatch_capture import kernel_kind
from evidence import dtype_name, exception_evidence
from vocabulary import Kernel

from .calls import call, first_tensor, scalar_loss

# Inputs above this size are not replayed (a full-size embedding table would be gigabytes).
REPLAY_LIMIT_BYTES = 256 << 20


def reached_on_device(func, args, kwargs, ctx: Context) -> dict[str, Any]:
    """What a composite op asks the device to run, which capture on meta tensors cannot see
    (aten::convolution reaches convolution_overrideable only on the device's dispatch key): the op
    replayed once on zero-filled device tensors of the captured shapes, under the worker's op
    capture (the dispatcher's account, or the backend's own tracking). Returns the ops that ran
    natively and through the fallback, and the error if it raised."""
    import torch
    from torch.utils._pytree import tree_leaves, tree_map

    size = sum(t.numel() * t.element_size() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor))
    if size > REPLAY_LIMIT_BYTES:
        return {"replayed": False, "why": f"inputs of {size >> 20} MiB, over the replay limit"}

    def on_device(t):
        return torch.zeros(tuple(t.shape), dtype=t.dtype, device=ctx.device) if isinstance(t, torch.Tensor) else t

    device_args, device_kwargs = tree_map(on_device, (args, kwargs))
    reached: dict[str, Any] = {"replayed": True}
    ctx.clear_tracking()
    try:
        with torch.no_grad(), ctx.capture:
            func(*device_args, **device_kwargs)
    except Exception as exc:
        reached["raised"] = exception_evidence(exc, limit=500)
    reached.update({field: sorted(ops) for field, ops in ctx.tracked_ops().items()})
    reached["ops_source"] = ctx.ops_source
    return reached


class Recorder:
    """Each op overload seen, with its calls, the dtypes of its tensor arguments and its phases;
    for composite ops, one call's arguments per dtype, to replay on the device."""

    def __init__(self) -> None:
        self.funcs: dict[str, Any] = {}
        self.kernels: dict[str, Kernel | None] = {}
        self.calls: dict[str, int] = defaultdict(int)
        self.dtypes: dict[str, set[str]] = defaultdict(set)
        self.phases: dict[str, set[str]] = defaultdict(set)
        self.composite_calls: dict[tuple[str, str], tuple[Any, Any]] = {}
        self.phase = "forward"

    def record(self, func, args, kwargs) -> None:
        name = func.name()
        if name not in self.funcs:
            self.funcs[name], self.kernels[name] = func, kernel_kind(name)
        self.calls[name] += 1
        self.phases[name].add(self.phase)
        tensor = first_tensor((args, kwargs))
        dtype = dtype_name(tensor.dtype) if tensor is not None else None
        if dtype:
            self.dtypes[name].add(dtype)
        if self.kernels[name] == Kernel.COMPOSITE:
            self.composite_calls.setdefault((name, dtype or ""), (args, kwargs))

    def rows(self, ctx: Context) -> list[dict[str, Any]]:
        rows = []
        for name, calls in sorted(self.calls.items()):
            row = {"op": name, "calls": calls, "dtypes": sorted(self.dtypes[name]),
                   "phases": sorted(self.phases[name]), "device_kernel": self.kernels[name]}
            if self.kernels[name] == Kernel.COMPOSITE:
                row["reaches"] = {dtype: reached_on_device(self.funcs[name], *arguments, ctx)
                                  for (op, dtype), arguments in sorted(self.composite_calls.items()) if op == name}
            rows.append(row)
        return rows


def capture(model, inputs, train: bool, ctx: Context) -> list[dict[str, Any]]:
    """The document's "ops": the model's forward (and with `train` its backward) on meta tensors."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    from comparison import to_device

    recorder = Recorder()

    def on_meta(value):
        return value.to("meta") if isinstance(value, torch.Tensor) and value.device.type != "meta" else value

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            recorder.record(func, args, kwargs)
            # Everything stays on meta: tensors the model makes on the CPU (a factory without
            # device=, a torch.tensor constant) and copies it makes to the CPU (.cpu()), which
            # the probe's placement check reports.
            args, kwargs = tree_map(on_meta, (args, kwargs))
            if "device" in kwargs:
                kwargs["device"] = torch.device("meta")
            return func(*args, **kwargs)

    meta_model = model if next(iter(model.parameters()), torch.empty(0)).device.type == "meta" else \
        copy.deepcopy(model).to("meta")
    meta_inputs = to_device(inputs, "meta")
    if train and isinstance(meta_inputs, dict) and "input_ids" in meta_inputs:
        meta_inputs = {**meta_inputs, "labels": meta_inputs["input_ids"]}
    with Mode():
        if train:
            meta_model.train()
            output = call(meta_model, meta_inputs)
            recorder.phase = "backward"
            scalar_loss(output).backward()
        else:
            with torch.no_grad():
                call(meta_model, meta_inputs)
    return recorder.rows(ctx)


def exported_ops(program, ctx: Context) -> list[dict[str, Any]]:
    """The document's "ops" for --exported: the aten ops of the program's graph, with the
    dtypes of their arguments' recorded values."""
    import torch
    from torch.fx.node import map_arg

    recorder = Recorder()
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            args, kwargs = map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
            recorder.record(node.target, args, kwargs)
    return recorder.rows(ctx)
