"""Evidence every suite (and check-model's probe) records the same way."""

from __future__ import annotations

import re
from typing import Any

import torch

from vocabulary import EVIDENCE_CORE, Where

# The aten op an error names: PyTorch's "Could not run 'aten::x' with arguments from the ...
# backend", the backend's "aten::x: ..." / "aten::x failed in the CPU fallback: ...", or
# "convolution_overrideable not implemented" for an op with no kernel for the device at all.
_FAILING_OP = re.compile(r"Could not run '(aten::[\w.]+)'|(aten::\w+(?:\.\w+)?)|^(\w+) not implemented")


def dtype_name(dtype) -> str:
    """How case ids and evidence name a dtype: float32, bfloat16, ..."""
    return str(dtype).removeprefix("torch.")


def describe_tensor(t) -> str:
    """How evidence names a tensor: dtype and shape, with the strides of a non-contiguous one
    (float32[4, 5]/strides[1, 4])."""
    text = f"{dtype_name(t.dtype)}{list(t.shape)}"
    if t.layout == torch.strided and not t.is_contiguous():
        text += f"/strides{list(t.stride())}"
    return text


def describe_call(args, kwargs) -> str:
    """How evidence names the inputs of a call (an OpInfo sample, a module's forward input): each
    tensor by describe_tensor, lists and tuples by their first four elements, anything else by the
    start of its repr: (float32[4, 5], [float32[3], float32[3]], dim=1)."""
    def describe(value) -> str:
        if isinstance(value, torch.Tensor):
            return describe_tensor(value)
        if isinstance(value, (list, tuple)):
            inner = ", ".join(describe(v) for v in value[:4]) + (", ..." if len(value) > 4 else "")
            return f"[{inner}]" if isinstance(value, list) else f"({inner})"
        return repr(value)[:40]

    parts = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def failing_op(message: str) -> str | None:
    """The aten op an error message names, or None."""
    match = _FAILING_OP.search(message)
    if match is None:
        return None
    return match.group(1) or match.group(2) or f"aten::{match.group(3)}"


def core_problems(evidence: dict[str, Any]) -> list[str]:
    """What breaks the types of the evidence's core (vocabulary.EVIDENCE_CORE): each core field
    present with a value of another JSON type, and a `where` the vocabulary does not name. The
    reports read the core by name and would read a broken field as absent."""
    problems = []
    for name, kind in EVIDENCE_CORE.items():
        if name not in evidence:
            continue
        value = evidence[name]
        ok = isinstance(value, str) if kind == "string" else \
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        if not ok:
            problems.append(f"{name} must be a {'string' if kind == 'string' else 'list of strings'}, "
                            f"not {type(value).__name__} {repr(value)[:80]}")
        elif name == "where" and value not in set(Where):
            problems.append(f"where must be one of {', '.join(Where)}, not {value!r}")
    return problems


def exception_evidence(exc: BaseException, limit: int = 2000) -> dict[str, Any]:
    """What an error is recorded as: its type, message, whether it says "unsupported", and the
    aten op it names (failing_op)."""
    message = str(exc)[:limit]
    evidence: dict[str, Any] = {"exception_type": type(exc).__name__, "message": message,
                                "unsupported": isinstance(exc, NotImplementedError)}
    if op := failing_op(message):
        evidence["failing_op"] = op
    return evidence
