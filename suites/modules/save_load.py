"""The modules suite's `save_load` check: torch.save / torch.load of a module on the device, as a
checkpoint holds it: the whole module, its state_dict, and views of its first floating-point
tensor that share its storage (at an offset, strided, expanded with stride 0, empty, transposed),
saved together in one file.

Variants (`variant` in the evidence):
  device_to_cpu     saved from the device, loaded with map_location="cpu"
  device_to_device  saved from the device, loaded with no map_location (back to the device)
  cpu_to_device     the CPU's module saved, loaded with map_location=<device>
Properties (`property`), for every tensor (`path`: module.<name>, state_dict.<key>, views.<kind>):
the device it lands on, dtype, shape, strides, storage offset and values (exactly: serialization
is lossless), and which tensors share a storage (the partition of the paths by storage must be
the saved one's: a view stays a view of the parameter, the state_dict's tensors stay the
module's). After device_to_device, the loaded module's forward matches the saved module's.
Every failure is listed (`failures`); the verdict names the first. Module inputs with the same
constructor save the same thing: each distinct constructor runs once, at most CONSTRUCTORS.
"""

from __future__ import annotations

import io
from typing import Any, Callable

import torch

from dispatch_capture import uncounted
from sides import Verdict
from vocabulary import Outcome

VARIANTS = ("device_to_cpu", "device_to_device", "cpu_to_device")
# What is saved depends on the module's parameters and buffers, which its constructor decides, not
# on the forward input: each distinct constructor runs once, at most this many per case
# (LinearCrossEntropyLoss has 857 module inputs).
CONSTRUCTORS = 8


def first_of_its_kind(case, constructor: str) -> bool:
    """Whether a module input with this constructor is to run (and note it as run)."""
    seen: set[str] = vars(case).setdefault("save_load_seen", set())
    if constructor in seen or len(seen) >= CONSTRUCTORS:
        return False
    seen.add(constructor)
    case.evidence["constructors_run"] = len(seen)
    return True


@uncounted()  # what the harness saves (the module's tensors and views of them): no op of the case's
def payload(module: torch.nn.Module) -> dict[str, Any]:
    state = module.state_dict()
    views: dict[str, torch.Tensor] = {}
    first = next((t for t in state.values() if t.is_floating_point() and t.numel() >= 2 and t.is_contiguous()), None)
    if first is not None:
        flat = first.view(-1)
        views = {"offset": flat[1:], "strided": flat[::2], "expanded": flat[1:2].expand(3, 2),  # stride 0
                 "empty": flat[2:2]}
        if first.dim() >= 2:
            views["transposed"] = first.transpose(0, 1)
    return {"module": module, "state_dict": state, "views": views}


def tensors(saved: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Every tensor of a payload by path."""
    found = {f"module.{n}": t for n, t in saved["module"].state_dict(keep_vars=True).items()}
    found.update({f"state_dict.{k}": t for k, t in saved["state_dict"].items()})
    found.update({f"views.{k}": t for k, t in saved["views"].items()})
    return {path: t for path, t in found.items() if isinstance(t, torch.Tensor)}


def sharing(found: dict[str, torch.Tensor]) -> set[frozenset[str]]:
    """The paths grouped by the storage they view (groups of one left out)."""
    groups: dict[Any, set[str]] = {}
    for path, t in found.items():
        groups.setdefault((t.device, t.untyped_storage().data_ptr()), set()).add(path)
    return {frozenset(g) for g in groups.values() if len(g) > 1}


def _round_trip(saved: dict[str, Any], map_location: Any) -> dict[str, Any]:
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    buffer.seek(0)
    return torch.load(buffer, map_location=map_location, weights_only=False)  # a whole module: not weights only


@uncounted()  # both sides copied back and compared by the harness
def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.detach().cpu(), b.detach().cpu()
    return bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else torch.equal(a, b)


def compare(source: dict[str, torch.Tensor], loaded: dict[str, torch.Tensor], device_type: str) -> list[dict[str, Any]]:
    """What differs between the saved tensors and the loaded ones, landed on `device_type`."""
    failures: list[dict[str, Any]] = []

    def differ(path: str, prop: str, saved: Any, got: Any) -> None:
        failures.append({"path": path, "property": prop, "saved": str(saved), "loaded": str(got)})

    if set(source) != set(loaded):
        differ("-", "tensors", sorted(source), sorted(loaded))
        return failures
    for path, s in source.items():
        t = loaded[path]
        checks: list[tuple[str, Callable[[torch.Tensor], Any]]] = [
            ("dtype", lambda x: x.dtype), ("shape", lambda x: tuple(x.shape)), ("strides", lambda x: x.stride()),
            ("storage_offset", lambda x: x.storage_offset())]
        if t.device.type != device_type:
            differ(path, "device", device_type, t.device)
        for prop, get in checks:
            if get(s) != get(t):
                differ(path, prop, get(s), get(t))
        if s.shape == t.shape and s.dtype == t.dtype and not _same_values(s, t):
            differ(path, "values", "the saved values", "other values")
    want, got = sharing(source), sharing(loaded)
    if want != got:
        differ("-", "sharing", sorted(sorted(g) for g in want), sorted(sorted(g) for g in got))
    return failures


def run(case, build_cpu: Callable[[], torch.nn.Module], build_device: Callable[[], torch.nn.Module],
        forward: Callable[[torch.nn.Module], Any]) -> None:
    """One module input: each variant's round trip, then the loaded module's forward. `forward`
    runs a module on the input moved to the module's device."""
    device = case.ctx.device
    device_type = torch.device(device).type
    cpu_saved = payload(case.cpu(build_cpu))
    dev_module = case.device(build_device, where={"stage": "move"})
    dev_saved = payload(dev_module)
    failures: list[dict[str, Any]] = []
    loaded_on_device = None
    for variant, saved, map_location, lands in (("device_to_cpu", dev_saved, "cpu", "cpu"),
                                                ("device_to_device", dev_saved, None, device_type),
                                                ("cpu_to_device", cpu_saved, device, device_type)):
        try:
            loaded = _round_trip(saved, map_location)
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {"exception_type": type(exc).__name__, "message": str(exc)[:2000],
                                          "variant": variant, **case.where}) from exc
        failures += [{"variant": variant, **f} for f in compare(tensors(saved), tensors(loaded), lands)]
        if variant == "device_to_device":
            loaded_on_device = loaded["module"]
    case.evidence.setdefault("tensors_compared", 0)
    case.evidence["tensors_compared"] += len(tensors(dev_saved))
    if failures:
        first = failures[0]
        raise Verdict(Outcome.FAIL, {
            **case.where, "variant": first["variant"], "property": first["property"], "path": first["path"],
            "failures": failures[:20],
            "message": "; ".join(f"{f['variant']} {f['path']} {f['property']}: saved {f['saved']}, loaded {f['loaded']}"
                                 for f in failures[:8])[:2000]})
    expected = case.device(lambda: forward(dev_module), where={"stage": "device"})
    actual = case.device(lambda: forward(loaded_on_device), where={"stage": "device", "variant": "device_to_device"})
    case.compare(actual, expected, {"variant": "device_to_device", "property": "forward", "compared": "loaded module's output"})
