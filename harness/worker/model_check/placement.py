"""Where the model's tensors are: tensors kept as plain module attributes (which .to(device) does
not move), parameters, buffers and inputs left off the device after the user's setup, and the ops
a forward on the device ran on CPU tensors, told apart as the model's doing or the backend's."""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

from .fatal import Fatal


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
        return [{"kind": "op on CPU tensors", "where": where or "(the top module)", "op": op, "calls": calls,
                 "fix": kind, "by": "backend" if kind in (BACKEND_CPU_OUTPUT, BACKEND_CPU_DERIVED) else "model"}
                for (where, op, kind), calls in sorted(self.found.items())]


def device_map_auto(model) -> dict[str, str]:
    """What transformers' device_map="auto" does with this machine: accelerate's
    infer_auto_device_map, then dispatch_model, as from_pretrained does."""
    try:
        from accelerate import dispatch_model, infer_auto_device_map
    except ImportError as exc:
        raise Fatal("--device-map auto needs accelerate, which transformers uses for it "
                    "(pip install accelerate)") from exc
    device_map = dict(infer_auto_device_map(model))
    dispatch_model(model, device_map=device_map)
    return {module or "(the whole model)": str(device) for module, device in device_map.items()}


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
