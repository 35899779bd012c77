"""Evidence every suite (and check-model's probe) records the same way."""

from __future__ import annotations

import re
from typing import Any

import torch

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


def failing_op(message: str) -> str | None:
    """The aten op an error message names, or None."""
    match = _FAILING_OP.search(message)
    if match is None:
        return None
    return match.group(1) or match.group(2) or f"aten::{match.group(3)}"


def exception_evidence(exc: BaseException, limit: int = 2000) -> dict[str, Any]:
    """What an error is recorded as: its type, message, whether it says "unsupported", and the
    aten op it names (failing_op)."""
    message = str(exc)[:limit]
    evidence: dict[str, Any] = {"exception_type": type(exc).__name__, "message": message,
                                "unsupported": isinstance(exc, NotImplementedError)}
    if op := failing_op(message):
        evidence["failing_op"] = op
    return evidence
