"""The public API entries a suite's subjects test, for `neuron-conform api-compat`.

A suite that tests public API declares it with a `public_api()` returning
{"mode": "eager" | "compile", "subjects": {subject: [entry, ...]}, "checks": [...] (optional: the
checks whose cases decide an entry's status; default every check)}, each entry
{"name": "torch.Tensor.add_", "section": "torch.Tensor", "kind": "in-place method"}: the section
is the namespace the name lives in (torch, torch.Tensor, torch.nn.functional, torch.nn,
torch.linalg, torch.fft, torch.special, torch.optim, ...). Only names the installed torch
has are entries, so the table never lists an API this torch lacks.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from suitelib import opinfo


def entry(name: str, kind: str) -> dict[str, str]:
    return {"name": name, "section": name.rsplit(".", 1)[0], "kind": kind}


def public(path: str) -> bool:
    """Whether torch.<path> is public API: no private component (dunder operators are public), not
    an operator namespace (torch.ops.aten.*)."""
    parts = path.split(".")
    return parts[0] != "ops" and not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
                                         for p in parts)


def resolve(path: str) -> Any:
    """torch.<path>, or None when this torch has no such attribute or it is not public API."""
    path = path.removeprefix("torch.")
    if not public(path):
        return None
    found: Any = torch
    for part in path.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def _method(variant: Any, kind: str) -> list[dict[str, str]]:
    name = getattr(variant, "__name__", None)
    if not name or not public(name) or getattr(torch.Tensor, name, None) is None:
        return []
    return [entry(f"torch.Tensor.{name}", kind)]


def opinfo_entries(op: Any) -> list[dict[str, str]]:
    """An OpInfo's public names: its function (torch.<name>), its Tensor method and in-place method,
    and each alias's function and methods."""
    out: list[dict[str, str]] = []
    if resolve(op.name) is not None:
        out.append(entry(f"torch.{op.name.removeprefix('torch.')}", "function"))
    out += _method(op.method_variant, "method") + _method(op.inplace_variant, "in-place method")
    for alias in op.aliases:
        if resolve(alias.name) is not None:
            out.append(entry(f"torch.{alias.name.removeprefix('torch.')}", "alias"))
        out += _method(alias.method_variant, "alias method") + _method(alias.inplace_variant, "alias in-place method")
    if not out and public(op.name) and getattr(torch.Tensor, op.name, None) is not None:  # a Tensor attribute: T, mT, item
        out.append(entry(f"torch.Tensor.{op.name}", "attribute"))
    unique = {e["name"]: e for e in out}
    return list(unique.values())


def opinfo_api(mode: str, checks: Iterable[str]) -> dict[str, Any]:
    """public_api() of a suite whose subjects are the OpInfos (ops: eager; compile: torch.compile);
    `checks`: those whose cases decide an entry's status (the API's own contract, not features
    beyond it such as forward-mode AD)."""
    return {"mode": mode, "checks": list(checks),
            "subjects": {name: opinfo_entries(op) for name, op in opinfo.by_subject().items()}}


def class_entries(name: str, cls: type, kind: str) -> list[dict[str, str]]:
    """A ModuleInfo's or OptimizerInfo's class under its public name (torch.<name>), when it is there."""
    return [entry(f"torch.{name}", kind)] if resolve(name) is cls else []
