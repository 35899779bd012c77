"""A test-only backend: torch_neuronsim with one planted defect per class of bug the ops suite's
semantic checks (random, ...) must catch, for harness/tests/test_semantics_checks.py.

  class             what is replaced                  the defect                            caught by
  frozen_generator  aten::uniform_                    draws from a generator seeded 0 on     random (successive,
                                                      every call: never advances, ignores    reseeded)
                                                      the device seed
  wrong_fraction    aten::native_dropout              keeps 1 - 0.8p of the elements          random (distribution)
                                                      (scaled by 1/(1-p) as it should)
  wrong_variance    aten::normal_                     draws with 1.1 times the standard       random (distribution)
                                                      deviation asked
  ignores_generator aten::exponential_                draws from the default generator, not   random (generator)
                                                      the generator= passed
  restore_ignored   torch.neuron.set_rng_state        restarts the generator from its seed    random (rng_state)
                                                      instead of restoring the saved state
  misaligned_p      aten::bernoulli                   draws each element with the p of the    random (contract)
                                                      mirrored position: the pooled fraction
                                                      is right, each element's is not
  sdpa_no_masking   aten::scaled_dot_product_attention  attends to every key: ignores          sdpa (bool_mask_*,
                                                      attn_mask and is_causal                float_mask, causal*)
  copies_per_tensor Tensor._reduce_ex_internal        saves each device tensor as a CPU copy  save_load (modules:
                    (torch.save of neuron tensors)    of itself (torch's path for a backend   strides, storage
                                                      without storages): views lose their     offset, sharing)
                                                      offset, strides and storage sharing
  autocast_dtype    aten::mm, aten::softmax.int       under autocast, mm runs in float16     autocast (dtype)
                    (AutocastPrivateUse1)             (not the autocast dtype, bfloat16) and
                                                      softmax is not cast up to float32

DEFECTS maps each class to the aten ops it replaces on PrivateUse1 and the kernel replacing
them, AUTOCAST those it replaces on AutocastPrivateUse1, PATCHES the device module's functions
it replaces, SERIALIZATION the torch.Tensor methods it replaces. Kernels draw from the device generator (through ops
that are not replaced) unless the defect is about the generator, so that each class fails only
its own sub-check. Everything else is torch_neuronsim, including its op tracking API.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch_neuronsim
from torch_neuronsim import (  # noqa: F401
    autocast_policy, clear_op_tracking, get_executed_ops, get_fallback_ops, native_ops)

__version__ = torch_neuronsim.__version__ + "+semantics"


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


def _restore_ignored(new_state, device="neuron"):
    generator = torch_neuronsim._C._default_generator(torch.neuron._device_index(device))
    generator.manual_seed(generator.initial_seed())  # back to the start, not to the saved position


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


# class -> {aten op (overload): kernel}
def _misaligned_p(self, *, generator=None):
    # each element's p from the other end (bernoulli_.Tensor, not planted: the device generator)
    return torch.empty_like(self).bernoulli_(self.flip(-1), generator=generator)


DEFECTS: dict[str, dict[str, Callable[..., Any]]] = {
    "frozen_generator": {"uniform_": _frozen_uniform},
    "wrong_fraction": {"native_dropout": _wrong_fraction},
    "wrong_variance": {"normal_": _wrong_variance},
    "ignores_generator": {"exponential_": _ignores_generator},
    "misaligned_p": {"bernoulli": _misaligned_p},
    "sdpa_no_masking": {"scaled_dot_product_attention": _sdpa_no_masking},
}

# class -> {aten op (overload): autocast kernel}
AUTOCAST: dict[str, dict[str, Callable[..., Any]]] = {
    "autocast_dtype": {"mm": _mm_in_float16, "softmax.int": _softmax_uncast},
}

# class -> {name in torch.neuron: replacement}
PATCHES: dict[str, dict[str, Callable[..., Any]]] = {
    "restore_ignored": {"set_rng_state": _restore_ignored},
}

_reduce_ex_internal = torch.Tensor._reduce_ex_internal


def _copies_per_tensor(self, proto):
    if self.device.type != "neuron":
        return _reduce_ex_internal(self, proto)
    return (torch._utils._rebuild_device_tensor_from_cpu_tensor,  # no storage: a copy of this tensor alone
            (self.cpu(), self.dtype, str(self.device), self.requires_grad))


# class -> {attribute of torch.Tensor: replacement}
SERIALIZATION: dict[str, dict[str, Callable[..., Any]]] = {
    "copies_per_tensor": {"_reduce_ex_internal": _copies_per_tensor},
}

_lib = torch.library.Library("aten", "IMPL")
for _kernels in DEFECTS.values():
    for _op, _kernel in _kernels.items():
        _lib.impl(_op, _kernel, "PrivateUse1")
for _kernels in AUTOCAST.values():
    for _op, _kernel in _kernels.items():
        _lib.impl(_op, _kernel, "AutocastPrivateUse1")
for _methods in SERIALIZATION.values():
    for _name, _method in _methods.items():
        setattr(torch.Tensor, _name, _method)
for _functions in PATCHES.values():
    for _name, _function in _functions.items():
        setattr(torch.neuron, _name, _function)
