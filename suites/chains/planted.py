"""The defects the chains suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one class of bug each, the kernel that has it, the check that
catches it. Never imported by a real run."""

from __future__ import annotations

from typing import Any, Callable

import torch

from suitelib.planting import Defect


# The fused path of fuses_stale: each result a planted op made since the device was last waited
# on, by where it lives, with its value then. A later planted op given a tensor at that place reads
# the kept value, as a fused executable reads its intermediate from its own buffer, missing what an
# in-place write did to the tensor meanwhile.
_FUSED: dict[tuple, torch.Tensor] = {}


def _place(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


def _fused(op: Callable[..., torch.Tensor]) -> Callable[..., Any]:
    def kernel(*args, **kwargs):
        def operand(value):
            if isinstance(value, torch.Tensor) and value.device.type != "cpu":
                kept = _FUSED.get(_place(value))
                return kept.clone() if kept is not None else value.cpu()
            return value
        result = op(*[operand(a) for a in args], **{k: operand(v) for k, v in kwargs.items()})
        device = next(a.device for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu")
        out = result.to(device)
        _FUSED[_place(out)] = result.clone()
        return out
    return kernel


_FUSED_OPS = {"neg": torch.neg, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos,
              "relu": torch.relu, "abs": torch.abs, "add.Tensor": torch.add, "sub.Tensor": torch.sub,
              "mul.Tensor": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum}


DEFECTS = {
    "fuses_stale": Defect({op: _fused(fn) for op, fn in _FUSED_OPS.items()},
                          "a fused path: each op's result stays in the executable's buffer, and a later op "
                          "reading it there misses an in-place write made to it between; the buffer is dropped "
                          "when the device is waited on", "inplace, view_written (never a one-op case)",
                          opt_in=True, on_synchronize=_FUSED.clear),
}
