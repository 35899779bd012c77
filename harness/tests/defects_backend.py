"""A test-only backend: torch_neuronsim with one planted defect per class of bug the operator,
foreach and fuzz suites must catch, for harness/tests/test_defects.py, test_foreach_suite.py and
test_fuzz_suite.py (the harness testing itself).

  class            op(s)                              the defect                          caught by
  ignores_strides  aten::neg, aten::maximum           reads its inputs as if contiguous   forward (noncontiguous)
  drops_nan        aten::sum, aten::sum.dim_IntList   a sum that skips NaN (nansum)       extremal (nan)
  no_resize        aten::exp.out                      leaves a wrongly sized out= as is   out (out_resized)
  writes_copy      aten::mul_.Tensor                  computes into a copy, not self      inplace (writes into self)
  wrong_dtype      aten::sigmoid                      returns float64 whatever the input  forward (dtype)
  flaky            (none yet)                         a kernel that fails one time in     (reruns; to come)
                                                      three
  drops_memory_format aten::clone                     returns a contiguous copy of a      layout (strides)
                                                      channels_last tensor
  copies_view      aten::diagonal                     returns a copy, not a view          layout (view)
  empty_reduction  aten::prod, aten::prod.dim_int     NaN for an empty input, not 1       forward (zero_size)
  accepts_scalar   aten::convolution                  takes a 0-dim bias (a tensor        forward (zero_dim)
                                                      scalar) the CPU refuses
  accepts_mismatched aten::mm, aten::cat,             computes on truncated operands, a   errors (shape_off_by_one,
                   aten::index_select                 negative index wrapped around       index_out_of_range)
  ignores_argument aten::leaky_relu_backward          a gradient that ignores              backward (argument
                                                      negative_slope (always 0.01)        negative_slope=0.2)
  ignores_grad_output aten::threshold_backward        relu's gradient as if the incoming  backward (sample)
                                                      gradient were all ones
  flat_backward    aten::tanh (AutogradPrivateUse1)   a backward formula that is not      gradgrad
                                                      differentiable itself (a device
                                                      autograd kernel without a
                                                      derivative of its own)
  misreads_stride0 aten::bmm                          reads a stride-0 (expanded) operand  forward (expanded)
                                                      as if its batches followed one
                                                      another in storage
  misreads_grad    aten::elu_backward                 reads a non-contiguous incoming      backward, gradgrad
                                                      gradient in storage order (the       (grad_noncontiguous)
                                                      kernel both orders of elu's
                                                      gradients call)
  leaks_memory     aten::floor                        keeps a device buffer alive on      resource balance (every
                                                      every call                          case of any suite)
  current_device   aten::sin                          allocates its output on the current devices (other_device)
                                                      device, not its input's (no device
                                                      guard)
  accepts_cpu_operand aten::atan2                     computes with a CPU operand beside  devices (cpu_operand)
                                                      a device one, where CUDA refuses
  loses_identity   aten::cat.out                      sees an out= that is one of its     out (out_is_input)
                                                      inputs as a separate tensor, so an
                                                      overlap the CPU refuses is taken
  cancels_variance aten::native_layer_norm            the variance as E[x^2] - E[x]^2:     invariance (shift)
                                                      exact near zero, wrong for inputs
                                                      with a large common offset
  stops_early      aten::_foreach_add.List,           processes the first 32 tensors of    foreach suite (length 33)
                   aten::_foreach_add_.List           the list and leaves the rest as they
                                                      were (a chunk loop that drops the last)
  current_device_but_float32                          allocates its output on the current fuzz (another dtype
                   aten::sign                         device at every dtype but float32   and other_device)
                                                      (the float32 kernel has its guard)
  first_device_backward                               allocates the gradient on device 0  fuzz (other_device
                   aten::silu_backward                whatever the input's index (the     and backward)
                                                      forward kernel is right)
  first_call_wrong aten::log1p                       wrong on its first call in a        fuzz (an example that
                                                      process, right once "compiled" (an  does not fail again:
                                                      executable whose first run differs  error, with what the
                                                      from its cached one's)              first call showed)
  values_unchecked aten::embedding                    looks up the row after the one      forward (sample: upstream
                                                      asked for (upstream skips comparing  skips comparing, the
                                                      embedding's values with the CPU)    CPU reproduces them)
  index_off_by_one aten::sort, aten::sort.stable     at bfloat16, an index one too high  forward at bfloat16 (an
                                                      where it is 63 or more (what        integer output compared
                                                      bfloat16's rtol 0.016 lets pass)    exactly)
  mutates_input    aten::erfc                         returns the right values, but       forward (sample: the
                                                      leaves erfc(x) in its input too     arguments after the call)
  host_output      aten::cosh                         returns its result on the host, not forward (sample: outputs
                                                      on the device                       on the inputs' device)
  writes_past_view aten::hypot_                       writes its result as if self were   inplace (inplace_
                                                      contiguous from its offset: into     interleaved)
                                                      the gaps of a strided view
  loses_bits       aten::log2                         at bfloat16 and float16, 1.2 % off  forward at bfloat16
                                                      everywhere: within the fixed rtol   (three-way: several
                                                      of 1.6 %, far beyond the CPU's own  times the CPU's own
                                                      rounding                            error)
  flushes_tiny     aten::atan                         returns 0 for results below 2^-20   fuzz (scaled_2^-24: the
                                                      in magnitude (a flush to zero)      atol scaled with it)
  takes_overlap    aten::div_.Tensor                  writes into a self whose elements   inplace (inplace_
                                                      share memory (the last write wins)  expanded: raises);
                                                      where the CPU refuses               fuzz (inplace, expanded)
  computes_on_host aten::erf                          right values, computed on the host  every case (host_only:
                                                      (a device kernel that copies its    the capture sees the
                                                      input to the CPU and back)          copy inside the kernel)
  mixes_layouts    aten::fmax                         a fast path taken when self is      fuzz (one operand laid
                                                      contiguous reads `other` as if it   out: permuted:1)
                                                      were too
  ignores_out_strides aten::expm1.out                 writes out= in storage order        fuzz (out form, out=
                                                      whatever its strides                laid out)
  ignores_self_strides aten::tan_                     reads and writes self in storage    fuzz (inplace form, self
                                                      order whatever its strides          laid out)
  integers_in_float aten::minimum                     integers compared as float32: exact fuzz (int32 with
                                                      below 2^24, wrong near iinfo's ends int_extremes)
  counts_from_front aten::cummax                      takes a negative dim d as -d - 1    fuzz (negative_dims)
                                                      (-1 as the first dimension)
  assumes_unique   aten::index_add                    adds as if no index came twice      fuzz (duplicate_indices)
                                                      (the last of two writes wins)

  fuses_stale      neg, tanh, sigmoid, sin, cos,   a fused path: each op's result stays    chains (inplace,
  (opt-in)         relu, abs, add.Tensor,         in the executable's buffer, and a later  view_written): never
                   sub.Tensor, mul.Tensor,        op reading it there misses an in-place  a one-op case
                   maximum, minimum               write made to it between; the buffer is
                                                  dropped when the device is waited on
  misses_inf       aten::_amp_foreach_non_finite_  the GradScaler's unscale: divides,   hf train_step at float16
  (opt-in)         check_and_unscale_             but finds only NaN, not inf, so a   (the scaler took a step
                                                  step whose gradients overflowed is   its gradients overflowed)
                                                  taken

DEFECTS maps each class to the aten ops it replaces and the kernel replacing them; a class with
no ops plants nothing. DEFECTS_CLASSES (comma-separated) plants only the classes it names; the
opt-in classes (OPT_IN) only when it names them. Each kernel computes on the CPU (so it never calls itself) and returns
device tensors, but leaks_memory's, which calls the backend's own floor.out: so each is also a
kernel that computes on the host, and a case it matches in is host_only, never a pass. Everything else is
torch_neuronsim, including its op tracking API.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import torch
import torch.utils._pytree
import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops, native_ops

__version__ = torch_neuronsim.__version__ + "+defects"
# torch_neuronsim's op tracking API, which the harness looks for on the backend module
__all__ = ["clear_op_tracking", "get_executed_ops", "get_fallback_ops", "native_ops"]


def _cpu(value: Any) -> Any:
    return value.cpu() if isinstance(value, torch.Tensor) else value


def _as_if_contiguous(t: torch.Tensor) -> torch.Tensor:
    """`t`'s elements read as a contiguous tensor would be: its storage from its offset, in order,
    ignoring its strides (what a kernel that assumes contiguity reads)."""
    flat = t.as_strided((t.numel(),), (1,), t.storage_offset())
    return flat.cpu().reshape(t.shape)


def _ignores_strides_unary(self):
    return torch.neg(_as_if_contiguous(self)).to(self.device)


def _ignores_strides_binary(self, other):
    a = _as_if_contiguous(self)
    b = _as_if_contiguous(other) if isinstance(other, torch.Tensor) and other.device == self.device else _cpu(other)
    return torch.maximum(a, b).to(self.device)


def _drops_nan(self, *args, **kwargs):
    return torch.nansum(self.cpu(), *args, **kwargs).to(self.device)


def _no_resize(self, *, out):
    result = torch.exp(self.cpu())
    n = min(out.numel(), result.numel())
    out.reshape(-1)[:n].copy_(result.reshape(-1)[:n].to(out.device))  # what fits; no resize, no warning
    return out


def _writes_copy(self, other):
    return torch.mul(self.cpu(), _cpu(other)).to(self.device)  # self is left as it was


def _wrong_dtype(self):
    return torch.sigmoid(self.cpu()).to(torch.float64).to(self.device)


def _drops_memory_format(self, *, memory_format=None):
    return self.cpu().clone(memory_format=torch.contiguous_format).to(self.device)


def _copies_view(self, offset=0, dim1=0, dim2=1):
    return torch.diagonal(self.cpu(), offset, dim1, dim2).clone().to(self.device)


def _empty_reduction_nan(self, *args, **kwargs):
    result = torch.prod(self.cpu(), *args, **kwargs)
    return (result.fill_(float("nan")) if self.numel() == 0 else result).to(self.device)


def _accepts_scalar_bias(input, weight, bias, *args):
    if bias is not None and bias.dim() == 0:
        bias = bias.reshape(1).expand(weight.shape[0])  # broadcast, where the CPU refuses
    result = torch.ops.aten.convolution(input.cpu(), weight.cpu(), _cpu(bias), *args)
    return result.to(input.device)


def _truncated_mm(self, mat2):
    k = min(self.shape[1], mat2.shape[0])
    return torch.mm(self.cpu()[:, :k], mat2.cpu()[:k]).to(self.device)


def _truncated_cat(tensors, dim=0):
    cpu = [t.cpu() for t in tensors if t.dim()]
    if not cpu:
        return torch.cat([t.cpu() for t in tensors], dim).to(tensors[0].device)
    dim = dim % cpu[0].dim()
    sizes = [min(t.shape[d] for t in cpu) for d in range(cpu[0].dim())]
    cut = [t[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(sizes))] for t in cpu]
    return torch.cat(cut, dim).to(tensors[0].device)


def _wrapping_index_select(self, dim, index):
    wrapped = index.cpu() % max(self.shape[dim] if self.dim() else 1, 1)
    return torch.index_select(self.cpu(), dim, wrapped).to(self.device)


def _ignores_negative_slope(grad_output, self, negative_slope, self_is_result):
    return torch.ops.aten.leaky_relu_backward(grad_output.cpu(), self.cpu(), 0.01, self_is_result).to(self.device)


def _ignores_grad_output(grad_output, self, threshold):
    return (self.cpu() > threshold).to(grad_output.dtype).to(self.device)  # grad_output's values unused


class _FlatTanh(torch.autograd.Function):
    """tanh whose backward is right to first order only: it uses the result detached."""

    @staticmethod
    def forward(ctx, x):
        with torch._C._AutoDispatchBelowAutograd():
            y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y.detach() ** 2)


def _flat_backward_tanh(x):
    return _FlatTanh.apply(x)


def _batches_in_storage_order(t: torch.Tensor) -> torch.Tensor:
    """`t` read as a kernel that assumes each batch follows the one before reads it: its storage
    from its offset in order (a stride of 0 taken for the contiguous one), and past the storage's
    end whatever memory holds there (zeros, here)."""
    if 0 not in t.stride() or not t.numel():
        return t.cpu()
    storage = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).cpu()
    read = storage[t.storage_offset():t.storage_offset() + t.numel()]
    return torch.cat([read, torch.zeros(t.numel() - read.numel(), dtype=t.dtype)]).reshape(t.shape)


def _misreads_stride0_bmm(self, mat2):
    return torch.bmm(_batches_in_storage_order(self), _batches_in_storage_order(mat2)).to(self.device)


def _misreads_grad_elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    # a broadcast gradient (a sum's ones, stride 0) it reads right; any other layout in storage order
    strided = not grad_output.is_contiguous() and 0 not in grad_output.stride()
    grad = _as_if_contiguous(grad_output) if strided else grad_output.cpu()
    return torch.ops.aten.elu_backward(grad, alpha, scale, input_scale, is_result,
                                       self_or_result.cpu()).to(self_or_result.device)


_LEAKED: list[torch.Tensor] = []  # what leaks_memory keeps: a training loop would run out of memory


def _leaks_memory_floor(self):
    _LEAKED.append(torch.empty(4096, device=self.device))  # a workspace never given back
    # the backend's own floor.out (not replaced), so that its values are the backend's (64-bit computed
    # in 32 bits) and the leak is the one defect: an exact floor would differ from floor.out at float64
    return torch.floor(self, out=torch.empty_like(self))


def _current_device(like: torch.Tensor) -> torch.device:
    """The current device of `like`'s type, whatever `like`'s own index: where a kernel without a
    device guard allocates."""
    return torch.device(like.device.type, torch.accelerator.current_device_index())


def _current_device_sin(self):
    return torch.sin(self.cpu()).to(_current_device(self))


def _accepts_cpu_operand_atan2(self, other):
    device = self.device if self.device.type != "cpu" else other.device
    return torch.atan2(self.cpu(), _cpu(other)).to(device)  # computes where CUDA refuses


def _loses_identity_cat_out(tensors, dim=0, *, out):
    result = out.cpu()
    torch.cat([t.cpu() for t in tensors], dim, out=result)  # copies: the CPU's cat sees no overlap
    out.resize_(result.shape).copy_(result.to(out.device))
    return out


def _cancels_variance_layer_norm(input, normalized_shape, weight, bias, eps):
    x = input.cpu()
    # the CPU kernel's own argument checks (its errors are right; its values are not used)
    torch.ops.aten.native_layer_norm(x, normalized_shape, _cpu(weight), _cpu(bias), eps)
    dims = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    mean = x.mean(dims, keepdim=True)
    variance = (x * x).mean(dims, keepdim=True) - mean * mean  # catastrophic cancellation far from zero
    rstd = torch.rsqrt(variance.clamp_min(0) + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight.cpu()
    if bias is not None:
        out = out + bias.cpu()
    return out.to(input.device), mean.to(input.device), rstd.to(input.device)


def _current_device_but_float32_sign(self):
    # the vectorized float32 kernel has a device guard; the generic one every other dtype takes has none
    return torch.sign(self.cpu()).to(self.device if self.dtype == torch.float32 else _current_device(self))


def _first_device_silu_backward(grad_output, self):
    # from an allocator of device index 0 whatever the input's index (the autograd engine makes the
    # input's device current for a backward, so a kernel that allocates on the current one is right)
    return torch.ops.aten.silu_backward(grad_output.cpu(), self.cpu()).to(torch.device(self.device.type, 0))


def _values_unchecked_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    shifted = (indices.cpu() + 1) % weight.shape[0]  # the next row: an off-by-one address
    return torch.embedding(weight.cpu(), shifted, padding_idx, scale_grad_by_freq, sparse).to(weight.device)


_LATE_INDEX = 63  # from here on, index + 1 is within bfloat16's rtol (1/63 < 0.016)


def _index_off_by_one(index: torch.Tensor) -> torch.Tensor:
    return torch.where(index >= _LATE_INDEX, index + 1, index)


def _index_off_by_one_sort(self, dim=-1, descending=False):
    return _index_off_by_one_sort_stable(self, stable=None, dim=dim, descending=descending)


def _index_off_by_one_sort_stable(self, *, stable=None, dim=-1, descending=False):
    values, indices = torch.sort(self.cpu(), stable=stable, dim=dim, descending=descending)
    if self.dtype == torch.bfloat16:
        indices = _index_off_by_one(indices)
    return values.to(self.device), indices.to(self.device)


def _mutates_input_erfc(self):
    result = torch.erfc(self.cpu())
    with torch.no_grad():
        self.copy_(result.to(self.device))  # a scratch buffer that was the input: written behind the caller's back
    return result.to(self.device)


def _host_output_cosh(self):
    return torch.cosh(self.cpu())  # never copied back: a host tensor from a device op


def _writes_past_view_hypot_(self, other):
    result = torch.hypot(self.cpu(), _cpu(other))
    as_if_contiguous = self.as_strided((self.numel(),), (1,), self.storage_offset())
    as_if_contiguous.copy_(result.reshape(-1).to(self.device))
    return self


def _loses_bits_log2(self):
    result = torch.log2(self.cpu().float())
    if self.dtype in (torch.bfloat16, torch.float16):
        result = result * 1.012  # a polynomial that keeps too few terms: a bias below the fixed rtol
    return result.to(self.dtype).to(self.device)


def _flushes_tiny_atan(self):
    result = torch.atan(self.cpu())
    return torch.where(result.abs() < 2.0 ** -20, torch.zeros_like(result), result).to(self.device)


def _computes_on_host_erf(self):
    return torch.erf(self.cpu()).to(self.device)  # right, but never on the device


def _takes_overlap_div_(self, other):
    result = torch.div(self.cpu(), _cpu(other)).to(self.device)
    target = self
    for d in reversed(range(self.dim())):
        if self.stride(d) == 0 and self.shape[d] > 1:  # one memory location for the dimension: the last write
            target, result = target.narrow(d, 0, 1), result.narrow(d, self.shape[d] - 1, 1)
    target.copy_(result)
    return self


FOREACH_CHUNK = 32


_LOG1P_CALLS = [0]


def _first_call_wrong_log1p(self):
    _LOG1P_CALLS[0] += 1
    result = torch.log1p(self.cpu())
    return (result + 1 if _LOG1P_CALLS[0] == 1 else result).to(self.device)


def _stops_early_foreach_add(tensors, others, *, alpha=1):
    done = [torch.add(t.cpu(), o.cpu(), alpha=alpha).to(t.device) for t, o in zip(tensors[:FOREACH_CHUNK], others)]
    return done + [t.clone() for t in tensors[FOREACH_CHUNK:]]  # the rest: never computed


def _stops_early_foreach_add_(tensors, others, *, alpha=1):
    for t, o in zip(tensors[:FOREACH_CHUNK], others):
        t.copy_(torch.add(t.cpu(), o.cpu(), alpha=alpha).to(t.device))


def _storage_order(t: torch.Tensor) -> torch.Tensor:
    """`t`'s elements as a 1-d view of its storage from its offset, in order: where a kernel that
    ignores `t`'s strides writes."""
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


def _mixes_layouts_fmax(self, other):
    if self.is_contiguous() and isinstance(other, torch.Tensor) and other.shape == self.shape:
        return torch.fmax(self.cpu(), _as_if_contiguous(other)).to(self.device)  # the fast path, for both
    return torch.fmax(self.cpu(), _cpu(other)).to(self.device)


def _ignores_out_strides_expm1(self, *, out):
    result = torch.expm1(self.cpu())
    if out.shape != result.shape:
        out.resize_(result.shape)
    _storage_order(out).copy_(result.reshape(-1).to(out.device))
    return out


def _ignores_self_strides_tan_(self):
    _storage_order(self).copy_(torch.tan(_as_if_contiguous(self)).reshape(-1).to(self.device))
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


# class -> {aten op (overload): kernel}
DEFECTS: dict[str, dict[str, Callable[..., Any]]] = {
    "ignores_strides": {"neg": _ignores_strides_unary, "maximum": _ignores_strides_binary},
    "drops_nan": {"sum": _drops_nan, "sum.dim_IntList": _drops_nan},
    "no_resize": {"exp.out": _no_resize},
    "writes_copy": {"mul_.Tensor": _writes_copy},
    "wrong_dtype": {"sigmoid": _wrong_dtype},
    # A kernel that fails one time in three (for reruns and the flaky outcome): to be planted.
    "flaky": {},
    "drops_memory_format": {"clone": _drops_memory_format},
    "copies_view": {"diagonal": _copies_view},
    "empty_reduction": {"prod": _empty_reduction_nan, "prod.dim_int": _empty_reduction_nan},
    "accepts_scalar": {"convolution": _accepts_scalar_bias},
    "accepts_mismatched": {"mm": _truncated_mm, "cat": _truncated_cat, "index_select": _wrapping_index_select},
    "ignores_argument": {"leaky_relu_backward": _ignores_negative_slope},
    "ignores_grad_output": {"threshold_backward": _ignores_grad_output},
    "misreads_stride0": {"bmm": _misreads_stride0_bmm},
    "misreads_grad": {"elu_backward": _misreads_grad_elu_backward},
    "leaks_memory": {"floor": _leaks_memory_floor},
    "current_device": {"sin": _current_device_sin},
    "accepts_cpu_operand": {"atan2": _accepts_cpu_operand_atan2},
    "loses_identity": {"cat.out": _loses_identity_cat_out},
    "cancels_variance": {"native_layer_norm": _cancels_variance_layer_norm},
    "stops_early": {"_foreach_add.List": _stops_early_foreach_add, "_foreach_add_.List": _stops_early_foreach_add_},
    "current_device_but_float32": {"sign": _current_device_but_float32_sign},
    "first_device_backward": {"silu_backward": _first_device_silu_backward},
    "first_call_wrong": {"log1p": _first_call_wrong_log1p},
    "values_unchecked": {"embedding": _values_unchecked_embedding},
    "index_off_by_one": {"sort": _index_off_by_one_sort, "sort.stable": _index_off_by_one_sort_stable},
    "mutates_input": {"erfc": _mutates_input_erfc},
    "host_output": {"cosh": _host_output_cosh},
    "writes_past_view": {"hypot_": _writes_past_view_hypot_},
    "takes_overlap": {"div_.Tensor": _takes_overlap_div_},
    "flushes_tiny": {"atan": _flushes_tiny_atan},
    "loses_bits": {"log2": _loses_bits_log2},
    "computes_on_host": {"erf": _computes_on_host_erf},
    "mixes_layouts": {"fmax": _mixes_layouts_fmax},
    "ignores_out_strides": {"expm1.out": _ignores_out_strides_expm1},
    "ignores_self_strides": {"tan_": _ignores_self_strides_tan_},
    "integers_in_float": {"minimum": _integers_in_float_minimum},
    "counts_from_front": {"cummax": _counts_from_front_cummax},
    "assumes_unique": {"index_add": _assumes_unique_index_add},
}

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


_device_synchronize = torch_neuronsim.neuron.synchronize


def _synchronize_unfused(device=None) -> None:
    _FUSED.clear()  # waiting ends every chain
    _device_synchronize(device)


def _misses_inf_unscale_(tensors, found_inf, inv_scale):
    for t in tensors:
        host = t.cpu()
        if bool(host.isnan().any()):  # inf is not looked for
            found_inf.fill_(1.0)
        t.copy_((host * inv_scale.cpu()).to(t.device))


_FUSED_OPS = {"neg": torch.neg, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos,
              "relu": torch.relu, "abs": torch.abs, "add.Tensor": torch.add, "sub.Tensor": torch.sub,
              "mul.Tensor": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum}
DEFECTS["fuses_stale"] = {op: _fused(fn) for op, fn in _FUSED_OPS.items()}
DEFECTS["misses_inf"] = {"_amp_foreach_non_finite_check_and_unscale_": _misses_inf_unscale_}
OPT_IN = {"fuses_stale", "misses_inf"}

# Autograd kernels the device registers for itself (AutogradPrivateUse1), as a backend with
# fused backward kernels does: class -> {aten op: kernel}.
AUTOGRAD_DEFECTS: dict[str, dict[str, Callable[..., Any]]] = {
    "flat_backward": {"tanh": _flat_backward_tanh},
}

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



_chosen = os.environ.get("DEFECTS_CLASSES")
PLANTED = set(_chosen.split(",")) if _chosen else set(DEFECTS) - OPT_IN
if unknown := PLANTED - set(DEFECTS) - set(AUTOGRAD_DEFECTS):
    raise ValueError(f"DEFECTS_CLASSES names no defect class: {', '.join(sorted(unknown))}")
if "fuses_stale" in PLANTED:
    torch_neuronsim.neuron.synchronize = _synchronize_unfused

_lib = torch.library.Library("aten", "IMPL")
for _class, _kernels in DEFECTS.items():
    if _class not in PLANTED:
        continue
    for _op, _kernel in _kernels.items():
        _lib.impl(_op, _kernel if _class == "accepts_cpu_operand" else _one_device(_kernel), "PrivateUse1")
for _class, _kernels in AUTOGRAD_DEFECTS.items():
    if _class not in PLANTED and _chosen:
        continue
    for _op, _kernel in _kernels.items():
        _lib.impl(_op, _kernel, "AutogradPrivateUse1")
