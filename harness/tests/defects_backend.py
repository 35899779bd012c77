"""A test-only backend: torch_neuronsim with every suite's planted defects (the harness testing
itself). Each suite declares, in `planted.py` beside its suite.py, the classes of bug its checks
must catch: `DEFECTS = {class: suitelib.planting.Defect(kernels, defect, caught_by, ...)}`. This
backend collects them from every suite found and registers their kernels on the device's dispatch
keys. Each suite's planted.py is its table of classes, ops, defects and the checks that must catch
them.

DEFECTS_CLASSES (comma-separated) plants only the classes it names; the opt-in classes (a defect
that changes what every other case sees: a fused path, a broken GradScaler, a faulty Dynamo
backend or collective) only when it names them. Each kernel computes on the CPU (so it never calls
itself) and returns device tensors, but leaks_memory's, which calls the backend's own floor.out: so
each is also a kernel that computes on the host, and a case it matches in is host_only, never a
pass. What a kernel cannot carry a class plants as patches (Defect.patches: a device-module
function, a Tensor method, the Dynamo backend "neuron", a torch.distributed function), set when it
is planted. This module is imported by the worker and by every rank process of the distributed
suite (which inherit DEFECTS_CLASSES). Everything else is torch_neuronsim, including what the
harness looks for on the backend module: op tracking, autocast_policy(), compile_stats() and the
collective counters.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from typing import Any, Callable

import torch
import torch.utils._pytree
import torch_neuronsim
from torch_neuronsim import (autocast_policy, clear_collective_stats, clear_op_tracking, compile_stats,
                             get_collective_stats, get_executed_ops, get_fallback_ops, native_ops)

import suite_api
from suitelib.planting import Defect

__version__ = torch_neuronsim.__version__ + "+defects"
# torch_neuronsim's introspection the harness looks for on the backend module: op tracking, the
# autocast policy (the ops suite's autocast check), compile_stats (the compile suite) and the
# collective counters (the distributed suite's ranks)
__all__ = ["autocast_policy", "clear_collective_stats", "clear_op_tracking", "compile_stats", "get_collective_stats",
           "get_executed_ops", "get_fallback_ops", "native_ops"]


def collected() -> dict[str, tuple[str, Defect]]:
    """Every suite's planted defects: class -> (the suite, its Defect); ValueError when two suites
    plant a class of one name."""
    found: dict[str, tuple[str, Defect]] = {}
    suite_api.package()
    for suite, folder in suite_api.find_suites().items():
        if not (folder / "planted.py").is_file():
            continue
        planted = importlib.import_module(f"{suite_api.PACKAGE}.{suite}.planted")
        for name, defect in planted.DEFECTS.items():
            if name in found:
                raise ValueError(f"the defect class {name} is planted by the {found[name][0]} and {suite} suites")
            found[name] = (suite, defect)
    return found


def _one_device(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """`kernel`, refusing operands on two devices as the real backend does (a CPU 0-dim scalar
    allowed), so that each planted kernel carries its own defect and no other."""
    def checked(*args, **kwargs):
        tensors = [t for t in torch.utils._pytree.tree_leaves([args, kwargs]) if isinstance(t, torch.Tensor)]
        devices = {t.device for t in tensors if not (t.device.type == "cpu" and t.dim() == 0)}
        if len(devices) > 1:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{', '.join(sorted(map(str, devices)))}!")
        return kernel(*args, **kwargs)
    return checked


def patch(planted: dict[str, Defect]) -> None:
    """Sets every planted class's patches (Defect.patches): an attribute of the target, or a key
    of it when it is a dict; ValueError when two classes set one place to different things."""
    done: dict[tuple[int, str], tuple[str, Any]] = {}  # (target's id, name) -> (the class, what it set)
    for name, defect in sorted(planted.items()):
        for (where, attribute), replacement in defect.patches.items():
            target = pkgutil.resolve_name(where) if isinstance(where, str) else where
            first, set_before = done.setdefault((id(target), attribute), (name, replacement))
            if set_before is not replacement:
                raise ValueError(f"the defect classes {first} and {name} patch {attribute} of {where} differently")
            if isinstance(target, dict):
                target[attribute] = replacement
            else:
                setattr(target, attribute, replacement)


DEFECTS = collected()
_chosen = os.environ.get("DEFECTS_CLASSES")
PLANTED = set(_chosen.split(",")) if _chosen else {name for name, (_, d) in DEFECTS.items() if not d.opt_in}
if unknown := PLANTED - set(DEFECTS):
    raise ValueError(f"DEFECTS_CLASSES names no defect class: {', '.join(sorted(unknown))}")

_ending_on_synchronize = [d.on_synchronize for name, (_, d) in DEFECTS.items()
                          if name in PLANTED and d.on_synchronize is not None]
if _ending_on_synchronize:
    _device_synchronize = torch_neuronsim.neuron.synchronize

    def _synchronize(device=None) -> None:
        for end in _ending_on_synchronize:  # waiting ends every fused chain
            end()
        _device_synchronize(device)

    torch_neuronsim.neuron.synchronize = _synchronize

_lib = torch.library.Library("aten", "IMPL")
for _name in sorted(PLANTED):
    _defect = DEFECTS[_name][1]
    for _op, _kernel in _defect.kernels.items():
        _lib.impl(_op, _kernel if _defect.mixes_devices else _one_device(_kernel), _defect.dispatch_key)

patch({name: DEFECTS[name][1] for name in PLANTED})
