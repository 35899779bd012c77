"""The Python side of `neuron-conform check-model`: which aten ops a model uses, without running it.

Prints one JSON document on stdout (the C++ side puts verdicts from the results store on it):
  {"model": ..., "ops": [{"op", "calls", "dtypes", "phases", "device_kernel", "reaches"?}], "probe": ...}
or {"fatal": "<one line naming the problem>"} with exit code 3.

The model's ops are captured under a TorchDispatchMode while it runs on meta tensors (a
7B-parameter config costs no memory), forward and, with --train, backward. `device_kernel` says
whether the backend registers a kernel for the op on its dispatch key (PrivateUse1); without one
the op would reach the CPU fallback. A composite op (a kernel for every backend, made of other
ops) is replayed once on the device, with zero-filled inputs of the captured shapes and the
backend's op tracking, so that `reaches` says what the device is really asked to run. --probe
runs the (tiny) model for real, on the device and on the CPU, and reports what fell back or
failed, and how far the outputs are apart. --compile compiles the (tiny) model with the backend's
Dynamo backend and reports the graphs, graph breaks and their reasons, a compile failure (its
stage and op) and how far the compiled output is from the CPU's.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import importlib
import importlib.util
import json
import logging
import math
import sys
import time
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any

from dispatch_capture import kernel_kind
from evidence import dtype_name, exception_evidence
from quick_exit import run_main
from vocabulary import Kernel, Outcome
import backend_contract
import suite_api
from case_context import Context, compile_cache_delta
from worker import protocol_stream, strict_json


class Fatal(Exception):
    """Bad input: the message is the one line the user sees."""


def digest(data: bytes) -> str:
    """A model's identity hash (its config, script or exported file): the first 16 hex digits of SHA-256."""
    return hashlib.sha256(data).hexdigest()[:16]


# --- the model ------------------------------------------------------------------------------

def hf_model(name: str, full_size: bool, dtype):
    """An architecture on meta tensors (tiny, or at its config's real size), and a rebuild of the
    tiny one on the CPU for --probe, built as the hf suite builds it."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()  # its warnings are not the user's business here
    suite_api.package()
    from suitelib.tiny_models import architecture_of, build, config_class, inputs as hf_inputs, tiny_config

    try:
        arch = architecture_of(name)
    except KeyError as exc:
        raise Fatal(exc.args[0]) from exc
    config = config_class(arch)() if full_size else tiny_config(arch)
    with torch.device("meta"):
        model = getattr(transformers, arch)(config).to(dtype).eval()
    parameters = sum(p.numel() for p in model.parameters())
    inputs = {"input_ids": torch.randint(0, min(99, config.vocab_size), (2, 7))}

    def rebuild_tiny():
        return build(arch, dtype, 0)[0], hf_inputs(0)

    identity = {"key": f"hf:{arch}", "hash": digest(config.to_json_string(use_diff=False).encode())}
    return model, inputs, {"kind": "hf", "architecture": arch, "full_size": full_size,
                           "parameters": parameters, "identity": identity}, rebuild_tiny


def script_model(spec: str, dtype):
    path_text, _, function = spec.rpartition(":")
    if not path_text or not function:
        raise Fatal(f"--script {spec}: expected FILE.py:FUNCTION")
    path = Path(path_text)
    if not path.is_file():
        raise Fatal(f"--script: {path} does not exist")
    module_spec = importlib.util.spec_from_file_location(f"user_model_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise Fatal(f"--script: importing {path} raised {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(module, function, None)):
        raise Fatal(f"--script: {path} has no function '{function}'")

    def build():
        try:
            result = getattr(module, function)()
        except Exception as exc:
            raise Fatal(f"--script: {path}:{function}() raised {type(exc).__name__}: {exc}") from exc
        import torch

        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module)):
            raise Fatal(f"--script: {path}:{function}() must return (model, inputs) with model a "
                        f"torch.nn.Module, got {type(result).__name__}")
        return result[0].to(dtype), result[1]

    model, inputs = build()
    identity = {"key": f"script:{path.resolve()}:{function}", "hash": digest(path.read_bytes())}
    return model, inputs, {"kind": "script", "script": spec, "identity": identity}, build


def call(model, inputs):
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def first_tensor(tree):
    """The first floating-point tensor in a tree (or any tensor), looking inside model outputs."""
    import torch
    from torch.utils._pytree import tree_leaves

    if hasattr(tree, "to_tuple"):  # transformers' ModelOutput
        tree = tree.to_tuple()
    tensors = [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]
    floating = [t for t in tensors if t.is_floating_point()]
    return (floating or tensors or [None])[0]


def scalar_loss(output):
    loss = getattr(output, "loss", None)
    if loss is None:
        tensor = first_tensor(output)
        if tensor is None:
            raise Fatal("--train: the model's output has no tensor to take a loss of")
        loss = tensor.float().sum()
    return loss


# --- capture ----------------------------------------------------------------------------------

# Inputs above this size are not replayed (a full-size embedding table would be gigabytes).
REPLAY_LIMIT_BYTES = 256 << 20


def reached_on_device(func, args, kwargs, ctx: Context) -> dict[str, Any]:
    """What a composite op asks the device to run, which capture on meta tensors cannot see
    (aten::convolution reaches convolution_overrideable only on the device's dispatch key): the op
    replayed once on zero-filled device tensors of the captured shapes, under the worker's op
    capture (the dispatcher's account, or the backend's own tracking). Returns the ops that ran
    natively and through the fallback, and the error if it
    raised."""
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
                row["reaches"] = {dtype: reached_on_device(self.funcs[name], *call, ctx)
                                  for (op, dtype), call in sorted(self.composite_calls.items()) if op == name}
            rows.append(row)
        return rows


def capture(model, inputs, train: bool, ctx: Context) -> list[dict[str, Any]]:
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


def exported_ops(path: Path, ctx: Context) -> list[dict[str, Any]]:
    import torch
    from torch.fx.node import map_arg

    if not path.is_file():
        raise Fatal(f"--exported: {path} does not exist")
    logging.getLogger("torch.export").setLevel(logging.CRITICAL)  # the one-line Fatal says it all
    try:
        program = torch.export.load(str(path))
    except Exception as exc:
        raise Fatal(f"--exported: {path} cannot be loaded by torch {torch.__version__} "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                    f"export it again with this torch") from exc
    recorder = Recorder()
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            args, kwargs = map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
            recorder.record(node.target, args, kwargs)
    return recorder.rows(ctx)


# --- placement ---------------------------------------------------------------------------------

def tensor_attributes(model) -> list[dict[str, Any]]:
    """The static part: tensors kept as plain module attributes, neither parameters nor buffers.
    model.to(device) moves parameters and buffers only, so these stay where they were made."""
    import torch

    found = []
    for path, module in model.named_modules():
        for name, value in vars(module).items():
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                found.append({"kind": "tensor attribute", "where": f"{path}.{name}" if path else name,
                              "shape": list(value.shape), "device": str(value.device),
                              "fix": "register it with register_buffer, so that .to(device) moves it"})
    return found


def misplaced(model, inputs, device_type: str) -> list[dict[str, Any]]:
    """Parameters, buffers and input tensors not on the device, after the setup (by module path)."""
    import torch
    from torch.utils._pytree import tree_flatten_with_path, keystr

    found = []
    for kind, tensors in (("parameter", model.named_parameters()), ("buffer", model.named_buffers())):
        for name, tensor in tensors:
            if tensor.device.type != device_type:
                found.append({"kind": f"{kind} not on the device", "where": name, "device": str(tensor.device)})
    leaves, _ = tree_flatten_with_path(inputs)
    for path, leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.device.type != device_type:
            found.append({"kind": "input not on the device", "where": f"inputs{keystr(path)}",
                          "device": str(leaf.device), "shape": list(leaf.shape)})
    return found


# The ops a model's own code moves a tensor to the CPU with (.cpu(), .to('cpu'), .item(), .tolist()).
COPY_OPS = frozenset({"aten::_to_copy", "aten::copy_", "aten::_copy_from", "aten::_copy_from_and_resize",
                      "aten::_local_scalar_dense", "aten::to.device", "aten::to.dtype_layout", "aten::clone"})
# Findings that are the backend's doing, not the model's.
BACKEND_CPU_OUTPUT = "returned on the CPU by the backend's kernel (its inputs were on the device): the backend's bug"
BACKEND_CPU_DERIVED = "computed on the CPU from a tensor a backend kernel returned there (not the model's doing)"


class HostOps:
    """Records, during a forward on the device, the ops that made or computed CPU tensors outside
    the backend's fallback (which runs below the dispatcher, unseen here), by the module whose
    forward ran them: a factory without device=, a torch.tensor constant, a .cpu() in the model;
    and, told apart, a backend kernel that returned a CPU tensor for device inputs (and what was
    then computed from it)."""

    def __init__(self, model, device_type: str) -> None:
        self.device_type = device_type
        # CPU tensors a backend kernel returned, and those computed from them, by id (held for the
        # forward's duration, so an id is never reused meanwhile)
        self.from_backend: dict[int, Any] = {}
        self.stack: list[str] = []
        self.found: dict[tuple[str, str, str], int] = defaultdict(int)
        self.device_ops = 0
        self.handles = []
        for path, module in model.named_modules():
            self.handles.append(module.register_forward_pre_hook(self._enter(path)))
            self.handles.append(module.register_forward_hook(self._leave))

    def _enter(self, path: str):
        def hook(module, args) -> None:
            self.stack.append(path)
        return hook

    def _leave(self, module, args, output) -> None:  # None: the module's output stays as it is
        self.stack.pop()

    def kind(self, func, args, kwargs, outputs) -> str | None:
        import torch
        from torch.utils._pytree import tree_leaves

        ins = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outs = [t for t in tree_leaves(outputs) if isinstance(t, torch.Tensor)]
        if any(t.device.type == self.device_type for t in ins + outs):
            self.device_ops += 1
        if not any(t.device.type == "cpu" for t in outs):
            return None
        name = func.name()
        if any(t.device.type == self.device_type for t in ins):
            if name in COPY_OPS:
                return "copied to the CPU (.cpu(), .to('cpu'), .tolist() or numpy in the model)"
            self.from_backend.update((id(t), t) for t in outs if t.device.type == "cpu")
            return BACKEND_CPU_OUTPUT
        if any(id(t) in self.from_backend for t in ins):
            self.from_backend.update((id(t), t) for t in outs if t.device.type == "cpu")
            return BACKEND_CPU_DERIVED
        if name in ("aten::lift_fresh", "aten::lift_fresh_copy"):
            return "a torch.tensor(...) constant made on the CPU (give it device=)"
        if not ins:
            return "a tensor created without device= (it is made on the CPU)"
        return "computed on the CPU (its inputs are CPU tensors)"

    def record(self, func, args, kwargs, outputs) -> None:
        kind = self.kind(func, args, kwargs, outputs)
        if kind:
            self.found[(self.stack[-1] if self.stack else "(outside the model)", func.name(), kind)] += 1

    def findings(self) -> list[dict[str, Any]]:
        for handle in self.handles:
            handle.remove()
        return [{"kind": "op on CPU tensors", "where": where or "(the top module)", "op": op,
                 "calls": calls, "fix": kind, "by": "backend" if kind in (BACKEND_CPU_OUTPUT, BACKEND_CPU_DERIVED) else "model"}
                for (where, op, kind), calls in sorted(self.found.items())]


def device_map_auto(model) -> dict[str, str]:
    """What transformers' device_map="auto" does with this machine: accelerate's
    infer_auto_device_map, then dispatch_model, as from_pretrained does."""
    try:
        from accelerate import dispatch_model, infer_auto_device_map
    except ImportError as exc:
        raise Fatal("--device-map auto needs accelerate, which transformers uses for it (pip install accelerate)") from exc
    device_map = dict(infer_auto_device_map(model))
    dispatch_model(model, device_map=device_map)
    return {module or "(the whole model)": str(device) for module, device in device_map.items()}


# --- shapes ------------------------------------------------------------------------------------

def parse_shapes(text: str) -> list[tuple[int, ...]]:
    """'2x16,2x32' -> [(2, 16), (2, 32)]; Fatal naming what does not parse."""
    shapes = []
    for item in text.split(","):
        dims = item.strip().lower().split("x")
        if not item.strip() or not all(d.isdigit() and int(d) > 0 for d in dims):
            raise Fatal(f"--shapes {text}: '{item}' is not a shape (positive sizes joined by x, shapes by commas: 2x16,2x32)")
        shapes.append(tuple(int(d) for d in dims))
    if len({len(s) for s in shapes}) != 1:
        raise Fatal(f"--shapes {text}: every shape needs the same number of dimensions")
    return shapes


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def buckets(shapes: list[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Each shape's bucket: fewest buckets, each one of the shapes, covering the others with at most
    2x padding (every dimension at most the bucket's, the bucket at most twice the elements). From
    the smallest shape not yet covered, the largest shape that covers it: optimal in one dimension
    (sequence lengths), a greedy cover in more."""
    def covers(bucket, shape) -> bool:
        return all(b >= s for b, s in zip(bucket, shape)) and numel(bucket) <= 2 * numel(shape)

    remaining = sorted(set(shapes), key=lambda s: (numel(s), s))
    assigned: dict[tuple[int, ...], tuple[int, ...]] = {}
    while remaining:
        bucket = max((c for c in remaining if covers(c, remaining[0])), key=lambda s: (numel(s), s))
        for shape in remaining:
            if covers(bucket, shape):
                assigned[shape] = bucket
        remaining = [s for s in remaining if s not in assigned]
    return assigned


def with_shape(inputs, shape: tuple[int, ...]):
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


def shapes_check(rebuild_tiny, make_inputs, shapes: list[tuple[int, ...]], backend, device: str,
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
                if counted is not None:
                    graphs = counted.graphs
                    call(compiled_model, inputs)
                    row["graphs"] = counted.graphs - graphs
            row["outcome"] = "ran"
        except Exception as exc:
            row.update(outcome=Outcome.ERROR, message=f"{type(exc).__name__}: {str(exc)[:300]}")
        rows.append(row)

    def total(key: str, only_buckets: bool = False) -> int | None:
        values = [r.get(key) for r in rows if not only_buckets or r["is_bucket"]]
        return None if any(v is None for v in values) or not values else sum(values)

    kinds = (["executables"] if eager else []) + (["graphs"] if compiled else [])
    return {"shapes": rows, "buckets": [list(b) for b in chosen],
            "total": {k: total(k) for k in kinds}, "bucketed": {k: total(k, True) for k in kinds},
            "tracking": bool(ctx.compile_cache()) or not eager}


# --- probe ------------------------------------------------------------------------------------

def placed(rebuild_tiny, device: str, device_map: str | None):
    """The tiny model and its inputs as the user's setup leaves them, and a CPU copy for the
    reference. A model whose function already put parameters on the device (or a --device-map) is
    the user's setup, taken as it is with its inputs; otherwise the model and inputs are moved
    with .to(device), as a user would."""
    import torch

    from comparison import to_device

    model, inputs = rebuild_tiny()
    model = model.eval()
    setup: dict[str, Any] = {}
    if device_map:
        setup["device_map"] = device_map_auto(model)
    tensors = list(model.parameters()) + list(model.buffers())
    if device_map or any(t.device.type == torch.device(device).type for t in tensors):
        setup["by"] = f"device_map={device_map!r}" if device_map else "the model's function"
        return model, inputs, copy.deepcopy(model).to("cpu"), to_device(inputs, "cpu"), setup
    setup["by"] = f"model.to({device!r})"
    try:
        return copy.deepcopy(model).to(device), to_device(inputs, device), model, inputs, setup
    except Exception as exc:  # bad input: the model refuses the device
        raise Fatal(f"the model cannot be moved to {device}: {type(exc).__name__}: {str(exc)[:300]}") from exc


class ModuleOutputs:
    """Each module's first tensor output, in the order the forwards end (inner modules before the
    modules holding them), copied to the CPU outside every dispatch mode: the harness's copies are
    not the model's ops."""

    def __init__(self, model) -> None:
        self.outputs: list[tuple[str, str, Any]] = []
        self.handles = [module.register_forward_hook(self._hook(path)) for path, module in model.named_modules()]

    def _hook(self, path: str):
        def hook(module, args, output) -> None:
            from torch.utils._python_dispatch import _disable_current_modes

            tensor = first_tensor(output)
            if tensor is not None:
                with _disable_current_modes():
                    self.outputs.append((path, type(module).__name__, tensor.detach().to("cpu", copy=True)))
        return hook

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def first_difference(device: ModuleOutputs, cpu: ModuleOutputs, rtol: float, atol: float) -> dict[str, Any] | None:
    """The first module (in the order forwards end) whose output on the device differs from its
    output on the CPU beyond the tolerance: where a wrong output starts."""
    from comparison import Mismatch, compare

    seen: dict[str, int] = defaultdict(int)
    expected: dict[tuple[str, int], Any] = {}
    for path, _, tensor in cpu.outputs:
        expected[(path, seen[path])] = tensor
        seen[path] += 1
    seen.clear()
    for path, kind, tensor in device.outputs:
        reference = expected.get((path, seen[path]))
        seen[path] += 1
        if reference is None:
            continue
        try:
            compare(tensor, reference, rtol, atol)
        except Mismatch as mismatch:
            return {"module": path or "(the whole model)", "type": kind, "max_abs_error": mismatch.max_abs,
                    "message": str(mismatch)[:500]}
    return None


def _against_cpu(rebuild_tiny, device: str, prepare, ran: str, failure,
                 device_map: str | None = None, watch: bool = False) -> dict[str, Any]:
    """The tiny model's forward on the CPU and, as `prepare(model on the device)` makes it, on the
    device: the outputs' distance is the suites' (comparison.errors: finite elements only), an
    exception is recorded as `failure(exc)` says. `watch` (the probe): the outputs judged with the
    suites' comparison at the model's dtype (a mismatch is outcome `fail`, naming the first module
    whose output differs), the placement after the setup and the ops the device forward ran on
    CPU tensors (the result's "placement")."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from comparison import MODEL_TOLERANCES, Mismatch, compare, errors

    device_model, device_inputs, model, inputs, setup = placed(rebuild_tiny, device, device_map)
    result: dict[str, Any] = {}
    device_type = torch.device(device).type
    host = HostOps(device_model, device_type) if watch else None
    floating = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    rtol, atol = MODEL_TOLERANCES.get(dtype_name(floating), MODEL_TOLERANCES["float32"])
    device_outputs, cpu_outputs = (ModuleOutputs(device_model), ModuleOutputs(model)) if watch else (None, None)

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            outputs = func(*args, **kwargs)
            host.record(func, args, kwargs, outputs)
            return outputs

    try:
        with torch.no_grad():
            expected = call(model, inputs)
            with Watch() if watch else contextlib.nullcontext():
                actual = call(prepare(device_model), device_inputs)
        result["max_abs_error"] = errors(first_tensor(actual), first_tensor(expected))[0]
        result["outcome"] = ran
        if watch:
            result.update(rtol=rtol, atol=atol)
            try:
                compare(first_tensor(actual), first_tensor(expected), rtol, atol)
            except Mismatch as mismatch:
                result.update(outcome=Outcome.FAIL, message=f"the output differs from the CPU's: {str(mismatch)[:500]}",
                              max_abs_error=mismatch.max_abs)
                if where := first_difference(device_outputs, cpu_outputs, rtol, atol):
                    result["first_differing_module"] = where
    except Exception as exc:
        result.update(failure(exc), outcome=Outcome.ERROR)
    finally:
        for outputs in (device_outputs, cpu_outputs):
            if outputs is not None:
                outputs.remove()
    if watch:
        findings = misplaced(device_model, device_inputs, device_type) + host.findings()
        result["placement"] = {"setup": setup, "findings": findings, "device_ops": host.device_ops,
                               "on_device": any(t.device.type == device_type for t in
                                                [*device_model.parameters(), *device_model.buffers()])}
    return result


def probe(rebuild_tiny, backend, device: str, device_map: str | None = None) -> dict[str, Any]:
    """Runs the tiny model's forward for real on the device and on the CPU, with the worker's op
    tracking, and watches where its tensors are (the result's "placement")."""
    ctx = Context(backend, device, 0)
    ctx.clear_tracking()
    before = ctx.compile_cache()
    with ctx.capture:
        result = _against_cpu(rebuild_tiny, device, lambda model: model, "ran",
                              lambda exc: exception_evidence(exc, limit=1000), device_map, watch=True)
    if after := ctx.compile_cache():  # the executables the model needed, from the cache or compiled
        result["compile_cache"] = compile_cache_delta(before, after)
    ops = ctx.tracked_ops()
    result.update(ops)
    result.update(ctx.observation(ops))
    return result


def train_probe(rebuild_tiny, device: str, hf: bool) -> dict[str, Any]:
    """--probe --train: the tiny model's training steps on the device against the CPU, as the hf
    suite's train_step check runs them (suitelib.training: autocast to the backend's lower
    precision, backward, clipping, AdamW, the step judged against the CPU's replay of it). The
    loss: a transformers model's own (labels = the input ids); a script's, the mean square of its
    first output."""
    from sides import Stage, both
    from suitelib import training

    device_model, device_inputs, model, inputs, _ = placed(rebuild_tiny, device, None)

    def loss_of(data):
        if hf:
            return lambda m: m(**data, labels=data["input_ids"], use_cache=False).loss
        return lambda m: first_tensor(call(m, data)).float().pow(2).mean()

    names = [n for n, p in model.named_parameters() if p.requires_grad]
    checked = sorted({names[0], names[len(names) // 2], names[-1]}) if names else []
    evidence: dict[str, Any] = {}
    try:
        matched = training.run(model, device_model, "float32", device, evidence, loss_of(inputs),
                               loss_of(device_inputs), checked, both)
        evidence["outcome"] = "ran" if matched else Outcome.FAIL
    except Stage as stage:
        evidence.update(exception_evidence(stage.cause, limit=1000), outcome=Outcome.ERROR, stage=stage.stage)
    evidence.pop("steps", None)
    return evidence


def compile_check(rebuild_tiny, backend, device: str) -> dict[str, Any]:
    """Compiles the tiny model's forward with the backend's Dynamo backend (static shapes, graph
    breaks allowed) and runs it against the CPU's eager result: does it compile into one graph?"""
    import torch

    import compilation

    if missing := compilation.missing_backend():
        raise Fatal(f"--compile: {missing}")
    compilation.reset()
    counted = compilation.CountedBackend()
    before = compilation.backend_stats(backend)

    def failure(exc: BaseException) -> dict[str, Any]:
        evidence = compilation.failure(exc)
        return {**evidence, "message": evidence["message"][:1000]}

    result = _against_cpu(rebuild_tiny, device, lambda model: torch.compile(model, backend=counted, dynamic=False),
                          "compiled", failure)
    result.update(graphs=counted.graphs, compile_seconds=counted.seconds,
                  backend_compile_stats=compilation.stats_delta(before, compilation.backend_stats(backend)))
    result.setdefault("graph_breaks", compilation.graph_breaks())
    return result


def integers(option: str, text: str) -> list[int]:
    values = [v.strip() for v in text.split(",")]
    if not all(v.isdigit() and int(v) > 0 for v in values):
        raise Fatal(f"{option} {text}: expected positive integers separated by commas (16,32,64)")
    return [int(v) for v in values]


def requested_shapes(args) -> list[tuple[int, ...]]:
    """The shapes --shapes, or --seq-lens with --batch-sizes, ask for (empty: none); Fatal for
    lists that do not parse or options that do not apply."""
    if not (args.shapes or args.seq_lens or args.batch_sizes):
        return []
    if not (args.probe or args.compile):
        raise Fatal("--shapes, --seq-lens and --batch-sizes run the model: add --probe (eager) and/or --compile")
    if args.shapes:
        if not args.script:
            raise Fatal("--shapes applies to --script (for --hf: --seq-lens and --batch-sizes)")
        return parse_shapes(args.shapes)
    if not args.hf:
        raise Fatal("--seq-lens and --batch-sizes apply to --hf (for --script: --shapes)")
    suite_api.package()
    from suitelib.tiny_models import BATCH, SEQ

    seq_lens = integers("--seq-lens", args.seq_lens) if args.seq_lens else [SEQ]
    batches = integers("--batch-sizes", args.batch_sizes) if args.batch_sizes else [BATCH]
    return [(b, s) for b in batches for s in seq_lens]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf")
    source.add_argument("--script")
    source.add_argument("--exported")
    parser.add_argument("--full-size", action="store_true")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--shapes", help="--script: input shapes to run (2x16,2x32), with --probe and/or --compile")
    parser.add_argument("--seq-lens", help="--hf: sequence lengths to run (16,32,64), with --probe and/or --compile")
    parser.add_argument("--batch-sizes", help="--hf: batch sizes to run with each sequence length (default 2)")
    parser.add_argument("--device-map", choices=["auto"],
                        help="--hf --probe: place the model as transformers' device_map='auto' does")
    parser.add_argument("--backend-module", required=True, help="the backend's Python module (torch_neuronx, ...)")
    parser.add_argument("--device", help="default: the PrivateUse1 device the backend module names")
    args = parser.parse_args()
    started = time.perf_counter()
    out = protocol_stream()  # the model's own prints (a script's, a graph break's) go to stderr
    try:
        import torch

        try:
            backend = importlib.import_module(args.backend_module)
        except Exception as exc:
            raise Fatal(f"cannot import backend module '{args.backend_module}': {type(exc).__name__}: {exc}")
        args.device = args.device or torch._C._get_privateuse1_backend_name()
        backend_contract.declare(args.backend_module, backend, args.device)
        dtype = getattr(torch, args.dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise Fatal(f"--dtype {args.dtype}: not a torch dtype")
        shapes = requested_shapes(args)
        if args.device_map and not (args.hf and args.probe):
            raise Fatal("--device-map applies to --hf with --probe (it places the model that the probe runs)")
        if args.exported:
            if args.probe or args.train or args.compile:
                raise Fatal("--exported: --probe, --train and --compile need a model to run; use --script or --hf")
            ops = exported_ops(Path(args.exported), Context(backend, args.device, 0))
            exported = Path(args.exported)
            model_info = {"kind": "exported", "exported": args.exported,
                          "identity": {"key": f"exported:{exported.resolve()}", "hash": digest(exported.read_bytes())}}
        else:
            if args.full_size and not args.hf:
                raise Fatal("--full-size applies to --hf only")
            model, inputs, model_info, rebuild = (hf_model(args.hf, args.full_size, dtype) if args.hf
                                                  else script_model(args.script, dtype))
            ops = capture(model, inputs, args.train, Context(backend, args.device, 0))
            static_findings = tensor_attributes(model)
        document: dict[str, Any] = {"model": {**model_info, "dtype": args.dtype, "train": args.train,
                                              "torch": torch.__version__, "backend_module": args.backend_module,
                                              "backend_version": str(getattr(backend, "__version__", "unknown"))},
                                    "ops": ops,
                                    # the evidence suite when check-model is given no --suite
                                    "default_suite": suite_api.DEFAULT_SUITE}
        if shapes:  # before the probe, so that the first shape's executables are its own
            if args.hf:  # (batch, sequence length), as the hf suite makes its inputs
                from suitelib.tiny_models import inputs as hf_inputs

                make_inputs = lambda shape: hf_inputs(0, seq=shape[1], batch=shape[0])  # noqa: E731
            else:
                make_inputs = lambda shape: with_shape(inputs, shape)  # noqa: E731
            document["shapes"] = shapes_check(rebuild, make_inputs, shapes, backend, args.device,
                                              eager=args.probe, compiled=args.compile)
        if not args.exported:
            document["placement"] = {"findings": static_findings}
        if args.probe:
            document["probe"] = probe(rebuild, backend, args.device, args.device_map)
            # the probe's placement (after the setup, and the forward's CPU ops) adds to the static part
            watched = document["probe"].pop("placement")
            known = {(f["kind"], f["where"]) for f in static_findings}
            document["placement"] = {**watched, "findings": static_findings + [
                f for f in watched["findings"] if (f["kind"], f["where"]) not in known]}
            if args.train:
                document["probe"]["train_step"] = train_probe(rebuild, args.device, bool(args.hf))
        if args.compile:
            document["compile"] = compile_check(rebuild, backend, args.device)
        document["capture_seconds"] = time.perf_counter() - started
        print(json.dumps(strict_json(document), allow_nan=False), file=out)
    except Fatal as fatal:
        print(json.dumps({"fatal": str(fatal)}), file=out)
        sys.exit(3)
    except Exception as exc:  # a bug of ours: say so, with the traceback on stderr
        traceback.print_exc()
        print(json.dumps({"fatal": f"check-model failed: {type(exc).__name__}: {exc}"}), file=out)
        sys.exit(3)


if __name__ == "__main__":
    run_main(main)
