"""The defects the aten suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one in an overload only this suite reaches (no OpInfo calls it at
the device) for each form it calls, opt-in (the ops suite's cases must not meet them). Never
imported by a real run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect


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


DEFECTS = {
    "ignores_max": Defect({"hardtanh_": _hardtanh_ignores_max}, "clamps from below only (max_val ignored)",
                          "inplace", opt_in=True),
    "ignores_derivative": Defect({"silu_backward.grad_input": _silu_backward_ignores_derivative},
                                 "writes grad_output, ignoring silu's derivative", "out", opt_in=True),
    "negated": Defect({"eq.Scalar_out": _eq_scalar_out_negated}, "writes `!=` instead of `==`", "out", opt_in=True),
}
