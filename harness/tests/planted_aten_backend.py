"""A test-only backend for harness/tests/test_aten_suite.py: torch_neuronsim with a planted defect
in overloads only the aten suite reaches (no OpInfo calls them at the device), one per check kind:

  overload                       check    the defect
  aten::hardtanh_                inplace  ignores max_val (clamps from below only)
  aten::silu_backward.grad_input out      writes grad_output, ignoring silu's derivative
  aten::eq.Scalar_out            out      writes `!=` instead of `==`

Each kernel computes on the CPU and writes device tensors; everything else is torch_neuronsim.
"""

from __future__ import annotations

import torch
import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops, native_ops  # noqa: F401

__version__ = torch_neuronsim.__version__ + "+planted-aten"


def _write(out: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    out.resize_(value.shape)
    out.copy_(value.to(out.device))
    return out


def _hardtanh_ignores_max(self, min_val=-1.0, max_val=1.0):
    return _write(self, torch.clamp(self.cpu(), min=min_val))


def _silu_backward_ignores_derivative(grad_output, self, *, grad_input):
    return _write(grad_input, grad_output.cpu())


def _eq_scalar_out_negated(self, other, *, out):
    return _write(out, torch.ne(self.cpu(), other))


_lib = torch.library.Library("aten", "IMPL")
_lib.impl("hardtanh_", _hardtanh_ignores_max, "PrivateUse1")
_lib.impl("silu_backward.grad_input", _silu_backward_ignores_derivative, "PrivateUse1")
_lib.impl("eq.Scalar_out", _eq_scalar_out_negated, "PrivateUse1")
