"""The defects the ops suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): one class of bug each, the kernel that has it (restore_ignored:
the device module's function, a patch), the check that catches it. The semantic checks' classes
(random, sdpa, autocast: harness/tests/test_semantics_checks.py) are opt-in. Never imported by a
real run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect, as_if_contiguous, current_device, on_cpu


def _ignores_strides_unary(self):
    return torch.neg(as_if_contiguous(self)).to(self.device)


def _ignores_strides_binary(self, other):
    a = as_if_contiguous(self)
    b = as_if_contiguous(other) if isinstance(other, torch.Tensor) and other.device == self.device else on_cpu(other)
    return torch.maximum(a, b).to(self.device)


def _drops_nan(self, *args, **kwargs):
    return torch.nansum(self.cpu(), *args, **kwargs).to(self.device)


def _no_resize(self, *, out):
    result = torch.exp(self.cpu())
    n = min(out.numel(), result.numel())
    out.reshape(-1)[:n].copy_(result.reshape(-1)[:n].to(out.device))  # what fits; no resize, no warning
    return out


def _writes_copy(self, other):
    return torch.mul(self.cpu(), on_cpu(other)).to(self.device)  # self is left as it was


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
    result = torch.ops.aten.convolution(input.cpu(), weight.cpu(), on_cpu(bias), *args)
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
    grad = as_if_contiguous(grad_output) if strided else grad_output.cpu()
    return torch.ops.aten.elu_backward(grad, alpha, scale, input_scale, is_result,
                                       self_or_result.cpu()).to(self_or_result.device)


_LEAKED: list[torch.Tensor] = []  # what leaks_memory keeps: a training loop would run out of memory


def _leaks_memory_floor(self):
    _LEAKED.append(torch.empty(4096, device=self.device))  # a workspace never given back
    # the backend's own floor.out (not replaced), so that its values are the backend's (64-bit computed
    # in 32 bits) and the leak is the one defect: an exact floor would differ from floor.out at float64
    return torch.floor(self, out=torch.empty_like(self))


def _current_device_sin(self):
    return torch.sin(self.cpu()).to(current_device(self))


def _accepts_cpu_operand_atan2(self, other):
    device = self.device if self.device.type != "cpu" else other.device
    return torch.atan2(self.cpu(), on_cpu(other)).to(device)  # computes where CUDA refuses


def _loses_identity_cat_out(tensors, dim=0, *, out):
    result = out.cpu()
    torch.cat([t.cpu() for t in tensors], dim, out=result)  # copies: the CPU's cat sees no overlap
    out.resize_(result.shape).copy_(result.to(out.device))
    return out


def _cancels_variance_layer_norm(input, normalized_shape, weight, bias, eps):
    x = input.cpu()
    # the CPU kernel's own argument checks (its errors are right; its values are not used)
    torch.ops.aten.native_layer_norm(x, normalized_shape, on_cpu(weight), on_cpu(bias), eps)
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
    result = torch.hypot(self.cpu(), on_cpu(other))
    as_if_contiguous = self.as_strided((self.numel(),), (1,), self.storage_offset())
    as_if_contiguous.copy_(result.reshape(-1).to(self.device))
    return self


def _loses_bits_log2(self):
    result = torch.log2(self.cpu().float())
    if self.dtype in (torch.bfloat16, torch.float16):
        result = result * 1.012  # a polynomial that keeps too few terms: a bias below the fixed rtol
    return result.to(self.dtype).to(self.device)


def _computes_on_host_erf(self):
    return torch.erf(self.cpu()).to(self.device)  # right, but never on the device


def _takes_overlap_div_(self, other):
    result = torch.div(self.cpu(), on_cpu(other)).to(self.device)
    target = self
    for d in reversed(range(self.dim())):
        if self.stride(d) == 0 and self.shape[d] > 1:  # one memory location for the dimension: the last write
            target, result = target.narrow(d, 0, 1), result.narrow(d, self.shape[d] - 1, 1)
    target.copy_(result)
    return self


# The semantic checks' defects (random, sdpa, autocast). A random kernel draws from the device
# generator (through ops not replaced) unless its defect is about the generator, so that each class
# fails only its own sub-check.

def _frozen_uniform(self, from_=0.0, to=1.0, *, generator=None):
    fixed = torch.Generator().manual_seed(0)  # a fresh generator per call: the same numbers every time
    values = torch.empty(self.shape, dtype=self.dtype).uniform_(from_, to, generator=fixed)
    return self.copy_(values.to(self.device))


def _wrong_fraction(input, p, train):
    if not train or input.numel() == 0:
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    keep = 1.0 - 0.8 * p  # drops too few ...
    mask = torch.empty_like(input, dtype=torch.bool).bernoulli_(keep)
    return input * mask / (1.0 - p), mask  # ... and scales as if it dropped p


def _wrong_variance(self, mean=0.0, std=1.0, *, generator=None):
    draw = torch.normal(torch.full_like(self, mean), torch.full_like(self, std * 1.1), generator=generator)
    return self.copy_(draw)


def _ignores_generator(self, lambd=1.0, *, generator=None):
    # -log(U)/lambda with U drawn (24 bits) from the device's default generator, whatever `generator` is
    bits = torch.randint_like(self, 0, 2**24, dtype=torch.float32)
    return self.copy_(-torch.log((bits + 0.5) / 2**24) / lambd)


# The device module of the backend planted on (torch.<its PrivateUse1 name>): imported before this
# module by defects_backend, the one importer.
DEVICE_MODULE = f"torch.{torch._C._get_privateuse1_backend_name()}"


def _restore_ignored(new_state, device=None):
    module = torch.get_device_module(torch._C._get_privateuse1_backend_name())
    module.manual_seed(module.initial_seed())  # back to the start, not to the saved position


def _misaligned_p(self, *, generator=None):
    # each element's p from the other end (bernoulli_.Tensor, not planted: the device generator)
    return torch.empty_like(self).bernoulli_(self.flip(-1), generator=generator)


def _sdpa_no_masking(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                     enable_gqa=False):
    q, k, v = (t.cpu() for t in (query, key, value))
    return torch.nn.functional.scaled_dot_product_attention(  # attn_mask and is_causal dropped
        q, k, v, dropout_p=dropout_p, scale=scale, enable_gqa=enable_gqa).to(query.device)


_NO_AUTOCAST = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)


def _mm_in_float16(self, mat2):
    with torch._C._ExcludeDispatchKeyGuard(_NO_AUTOCAST):  # as an autocast kernel redispatches
        return torch.mm(self.half(), mat2.half())


def _softmax_uncast(self, dim, dtype=None):
    with torch._C._ExcludeDispatchKeyGuard(_NO_AUTOCAST):
        return torch.softmax(self, dim, dtype=dtype)  # in the input's dtype, not float32


DEFECTS = {
    "ignores_strides": Defect({"neg": _ignores_strides_unary, "maximum": _ignores_strides_binary},
                              "reads its inputs as if contiguous", "forward (noncontiguous)"),
    "drops_nan": Defect({"sum": _drops_nan, "sum.dim_IntList": _drops_nan},
                        "a sum that skips NaN (nansum)", "extremal (nan)"),
    "no_resize": Defect({"exp.out": _no_resize}, "leaves a wrongly sized out= as is", "out (out_resized)"),
    "writes_copy": Defect({"mul_.Tensor": _writes_copy}, "computes into a copy, not self",
                          "inplace (writes into self)"),
    "wrong_dtype": Defect({"sigmoid": _wrong_dtype}, "returns float64 whatever the input", "forward (dtype)"),
    "drops_memory_format": Defect({"clone": _drops_memory_format},
                                  "returns a contiguous copy of a channels_last tensor", "layout (strides)"),
    "copies_view": Defect({"diagonal": _copies_view}, "returns a copy, not a view", "layout (view)"),
    "empty_reduction": Defect({"prod": _empty_reduction_nan, "prod.dim_int": _empty_reduction_nan},
                              "NaN for an empty input, not 1", "forward (zero_size)"),
    "accepts_scalar": Defect({"convolution": _accepts_scalar_bias},
                             "takes a 0-dim bias (a tensor scalar) the CPU refuses", "forward (zero_dim)"),
    "accepts_mismatched": Defect({"mm": _truncated_mm, "cat": _truncated_cat, "index_select": _wrapping_index_select},
                                 "computes on truncated operands, a negative index wrapped around",
                                 "errors (shape_off_by_one, index_out_of_range)"),
    "ignores_argument": Defect({"leaky_relu_backward": _ignores_negative_slope},
                               "a gradient that ignores negative_slope (always 0.01)",
                               "backward (argument negative_slope=0.2)"),
    "ignores_grad_output": Defect({"threshold_backward": _ignores_grad_output},
                                  "relu's gradient as if the incoming gradient were all ones", "backward (sample)"),
    "flat_backward": Defect({"tanh": _flat_backward_tanh},
                            "a backward formula that is not differentiable itself (a device autograd kernel "
                            "without a derivative of its own)", "gradgrad", dispatch_key="AutogradPrivateUse1"),
    "misreads_stride0": Defect({"bmm": _misreads_stride0_bmm},
                               "reads a stride-0 (expanded) operand as if its batches followed one another in "
                               "storage", "forward (expanded)"),
    "misreads_grad": Defect({"elu_backward": _misreads_grad_elu_backward},
                            "reads a non-contiguous incoming gradient in storage order (the kernel both orders "
                            "of elu's gradients call)", "backward, gradgrad (grad_noncontiguous)"),
    "leaks_memory": Defect({"floor": _leaks_memory_floor}, "keeps a device buffer alive on every call",
                           "resource balance (every case of any suite)"),
    "current_device": Defect({"sin": _current_device_sin},
                             "allocates its output on the current device, not its input's (no device guard)",
                             "devices (other_device)"),
    "accepts_cpu_operand": Defect({"atan2": _accepts_cpu_operand_atan2},
                                  "computes with a CPU operand beside a device one, where CUDA refuses",
                                  "devices (cpu_operand)", mixes_devices=True),
    "loses_identity": Defect({"cat.out": _loses_identity_cat_out},
                             "sees an out= that is one of its inputs as a separate tensor, so an overlap the "
                             "CPU refuses is taken", "out (out_is_input)"),
    "cancels_variance": Defect({"native_layer_norm": _cancels_variance_layer_norm},
                               "the variance as E[x^2] - E[x]^2: exact near zero, wrong for inputs with a large "
                               "common offset", "invariance (shift)"),
    "values_unchecked": Defect({"embedding": _values_unchecked_embedding},
                               "looks up the row after the one asked for (upstream skips comparing embedding's "
                               "values with the CPU)", "forward (sample: the CPU reproduces them)"),
    "index_off_by_one": Defect({"sort": _index_off_by_one_sort, "sort.stable": _index_off_by_one_sort_stable},
                               "at bfloat16, an index one too high where it is 63 or more (what bfloat16's "
                               "rtol 0.016 lets pass)", "forward at bfloat16 (an integer output compared exactly)"),
    "mutates_input": Defect({"erfc": _mutates_input_erfc}, "returns the right values, but leaves erfc(x) in "
                            "its input too", "forward (sample: the arguments after the call)"),
    "host_output": Defect({"cosh": _host_output_cosh}, "returns its result on the host, not on the device",
                          "forward (sample: outputs on the inputs' device)"),
    "writes_past_view": Defect({"hypot_": _writes_past_view_hypot_},
                               "writes its result as if self were contiguous from its offset: into the gaps of "
                               "a strided view", "inplace (inplace_interleaved)"),
    "takes_overlap": Defect({"div_.Tensor": _takes_overlap_div_},
                            "writes into a self whose elements share memory (the last write wins) where the "
                            "CPU refuses", "inplace (inplace_expanded: raises); fuzz (inplace, expanded)"),
    "loses_bits": Defect({"log2": _loses_bits_log2},
                         "at bfloat16 and float16, 1.2 % off everywhere: within the fixed rtol of 1.6 %, far "
                         "beyond the CPU's own rounding", "forward at bfloat16 (three-way: several times the "
                         "CPU's own error)"),
    "computes_on_host": Defect({"erf": _computes_on_host_erf},
                               "right values, computed on the host (a device kernel that copies its input to "
                               "the CPU and back)", "every case (host_only: the capture sees the copy inside "
                               "the kernel)"),
    # the semantic checks' (opt-in: the ops suite's other checks draw, attend and autocast with them)
    "frozen_generator": Defect({"uniform_": _frozen_uniform},
                               "draws from a generator seeded 0 on every call: never advances, ignores the device "
                               "seed", "random (successive, reseeded)", opt_in=True),
    "wrong_fraction": Defect({"native_dropout": _wrong_fraction},
                             "keeps 1 - 0.8p of the elements (scaled by 1/(1-p) as it should)",
                             "random (distribution)", opt_in=True),
    "wrong_variance": Defect({"normal_": _wrong_variance}, "draws with 1.1 times the standard deviation asked",
                             "random (distribution)", opt_in=True),
    "ignores_generator": Defect({"exponential_": _ignores_generator},
                                "draws from the default generator, not the generator= passed", "random (generator)",
                                opt_in=True),
    "restore_ignored": Defect({}, "torch.<device>.set_rng_state restarts the generator from its seed instead of "
                              "restoring the saved state", "random (rng_state)", opt_in=True,
                              patches={(DEVICE_MODULE, "set_rng_state"): _restore_ignored}),
    "misaligned_p": Defect({"bernoulli": _misaligned_p},
                           "draws each element with the p of the mirrored position: the pooled fraction is right, "
                           "each element's is not", "random (contract)", opt_in=True),
    "sdpa_no_masking": Defect({"scaled_dot_product_attention": _sdpa_no_masking},
                              "attends to every key: ignores attn_mask and is_causal",
                              "sdpa (bool_mask_*, float_mask, causal*)", opt_in=True),
    "autocast_dtype": Defect({"mm": _mm_in_float16, "softmax.int": _softmax_uncast},
                             "under autocast (its kernels on AutocastPrivateUse1), mm runs in float16 (not the "
                             "autocast dtype, bfloat16) and softmax is not cast up to float32", "autocast (dtype)",
                             dispatch_key="AutocastPrivateUse1", opt_in=True),
}
