"""The defects the fuzz suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one class of bug each, the kernel that has it, the check that
catches it. Never imported by a real run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect, as_if_contiguous, current_device, on_cpu, storage_order


def _current_device_but_float32_sign(self):
    # the vectorized float32 kernel has a device guard; the generic one every other dtype takes has none
    return torch.sign(self.cpu()).to(self.device if self.dtype == torch.float32 else current_device(self))


def _first_device_silu_backward(grad_output, self):
    # from an allocator of device index 0 whatever the input's index (the autograd engine makes the
    # input's device current for a backward, so a kernel that allocates on the current one is right)
    return torch.ops.aten.silu_backward(grad_output.cpu(), self.cpu()).to(torch.device(self.device.type, 0))


_LOG1P_CALLS = [0]


def _first_call_wrong_log1p(self):
    _LOG1P_CALLS[0] += 1
    result = torch.log1p(self.cpu())
    return (result + 1 if _LOG1P_CALLS[0] == 1 else result).to(self.device)


def _flushes_tiny_atan(self):
    result = torch.atan(self.cpu())
    return torch.where(result.abs() < 2.0 ** -20, torch.zeros_like(result), result).to(self.device)


def _mixes_layouts_fmax(self, other):
    if self.is_contiguous() and isinstance(other, torch.Tensor) and other.shape == self.shape:
        return torch.fmax(self.cpu(), as_if_contiguous(other)).to(self.device)  # the fast path, for both
    return torch.fmax(self.cpu(), on_cpu(other)).to(self.device)


def _ignores_out_strides_expm1(self, *, out):
    result = torch.expm1(self.cpu())
    if out.shape != result.shape:
        out.resize_(result.shape)
    storage_order(out).copy_(result.reshape(-1).to(out.device))
    return out


def _ignores_self_strides_tan_(self):
    storage_order(self).copy_(torch.tan(as_if_contiguous(self)).reshape(-1).to(self.device))
    return self


def _integers_in_float_minimum(self, other):
    if self.dtype.is_floating_point or self.dtype.is_complex or self.dtype == torch.bool:
        return torch.minimum(self.cpu(), other.cpu()).to(self.device)
    return torch.minimum(self.cpu().float(), other.cpu().float()).to(self.dtype).to(self.device)


def _counts_from_front_cummax(self, dim):
    values, indices = torch.cummax(self.cpu(), -dim - 1 if dim < 0 else dim)  # -1 taken as the first
    return values.to(self.device), indices.to(self.device)


def _assumes_unique_index_add(self, dim, index, source, *, alpha=1):
    s, i = self.cpu(), index.cpu()
    return s.index_copy(dim, i, s.index_select(dim, i) + alpha * source.cpu()).to(self.device)


DEFECTS = {
    "current_device_but_float32": Defect({"sign": _current_device_but_float32_sign},
                                         "allocates its output on the current device at every dtype but float32 "
                                         "(the float32 kernel has its guard)",
                                         "fuzz (another dtype and other_device)"),
    "first_device_backward": Defect({"silu_backward": _first_device_silu_backward},
                                    "allocates the gradient on device 0 whatever the input's index (the forward "
                                    "kernel is right)", "fuzz (other_device and backward)"),
    "first_call_wrong": Defect({"log1p": _first_call_wrong_log1p},
                               "wrong on its first call in a process, right once \"compiled\" (an executable "
                               "whose first run differs from its cached one's)",
                               "fuzz (an example that does not fail again: error, with what the first call showed)"),
    "flushes_tiny": Defect({"atan": _flushes_tiny_atan}, "returns 0 for results below 2^-20 in magnitude (a flush "
                           "to zero)", "fuzz (scaled_2^-24: the atol scaled with it)"),
    "mixes_layouts": Defect({"fmax": _mixes_layouts_fmax}, "a fast path taken when self is contiguous reads "
                            "`other` as if it were too", "fuzz (one operand laid out: permuted:1)"),
    "ignores_out_strides": Defect({"expm1.out": _ignores_out_strides_expm1},
                                  "writes out= in storage order whatever its strides",
                                  "fuzz (out form, out= laid out)"),
    "ignores_self_strides": Defect({"tan_": _ignores_self_strides_tan_},
                                   "reads and writes self in storage order whatever its strides",
                                   "fuzz (inplace form, self laid out)"),
    "integers_in_float": Defect({"minimum": _integers_in_float_minimum},
                                "integers compared as float32: exact below 2^24, wrong near iinfo's ends",
                                "fuzz (int32 with int_extremes)"),
    "counts_from_front": Defect({"cummax": _counts_from_front_cummax},
                                "takes a negative dim d as -d - 1 (-1 as the first dimension)", "fuzz (negative_dims)"),
    "assumes_unique": Defect({"index_add": _assumes_unique_index_add},
                             "adds as if no index came twice (the last of two writes wins)",
                             "fuzz (duplicate_indices)"),
}
