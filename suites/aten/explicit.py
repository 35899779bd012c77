"""Calls written by hand for overloads that no OpInfo's CPU run calls in any form (so no donor
exists): private kernels (`_add_relu`, `_aminmax`, `_fused_adam_`, ...), the RNG kernels, 3-d
paddings and a few `.out` forms. Each entry: the check, the dtype, an OpInfo whose tolerance
and decorations apply, `make()` building the CPU arguments (called seeded, once per side), and
whether the values are comparable (False for random draws: then structure, shapes and dtypes).
Reviewed by hand; `suite.py` runs them as it runs a donor's call."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import torch


class Explicit(NamedTuple):
    check: str
    dtype: str
    opinfo: str
    make: Callable[[], tuple[tuple, dict[str, Any]]]
    values: bool = True


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _pos(*shape: int) -> torch.Tensor:
    return torch.rand(*shape) + 0.5


def _ints(*shape: int, high: int = 100) -> torch.Tensor:
    return torch.randint(0, high, shape)


def _out(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(0, dtype=dtype)


def _params(n: int = 2) -> list[torch.Tensor]:
    return [_r(3, 4) for _ in range(n)]


def _steps(n: int = 2) -> list[torch.Tensor]:
    return [torch.tensor(3.0) for _ in range(n)]


_ADAM = dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=True, maximize=False)
_SGD = dict(weight_decay=0.01, momentum=0.9, lr=0.01, dampening=0.0, nesterov=True, maximize=False,
            is_first_step=False)
_ADAGRAD = dict(lr=0.01, lr_decay=0.01, weight_decay=0.01, eps=1e-10, maximize=False)


def _adam(tensor_lr: bool) -> tuple[tuple, dict]:
    kwargs = {**_ADAM, "lr": torch.tensor(0.01)} if tensor_lr else dict(_ADAM)
    return (_params(), _params(), _params(), [p.abs() for p in _params()], [p.abs() for p in _params()],
            _steps()), kwargs


def _sgd(tensor_lr: bool) -> tuple[tuple, dict]:
    kwargs = {**_SGD, "lr": torch.tensor(0.01)} if tensor_lr else dict(_SGD)
    return (_params(), _params(), _params()), kwargs


def _adagrad(tensor_lr: bool) -> tuple[tuple, dict]:
    kwargs = {**_ADAGRAD, "lr": torch.tensor(0.01)} if tensor_lr else dict(_ADAGRAD)
    return (_params(), _params(), [p.abs() for p in _params()], _steps()), kwargs


def _glu_backward_jvp() -> tuple[tuple, dict]:
    x = _r(4, 6)
    return (_r(4, 6), _r(4, 3), x, _r(4, 3), _r(4, 6), 1), {}


def _weight_norm_backward() -> tuple[tuple, dict]:
    v, g = _r(4, 3), _pos(4, 1)
    norms = v.norm(dim=1, keepdim=True)
    return (_r(4, 3), v, g, norms, 0), {}


def _dirichlet_grad() -> tuple[tuple, dict]:
    alpha = _pos(3, 4)
    x = torch.rand(3, 4) * 0.8 + 0.1
    return (x, alpha, alpha.sum(-1, keepdim=True).expand(3, 4).contiguous()), {}


CALLS: dict[str, Explicit] = {
    "aten::__lshift__.Tensor": Explicit("direct", "int64", "bitwise_left_shift",
                                        lambda: ((_ints(4, 4), _ints(4, 4, high=5)), {})),
    "aten::__rshift__.Tensor": Explicit("direct", "int64", "bitwise_right_shift",
                                        lambda: ((_ints(4, 4), _ints(4, 4, high=5)), {})),
    "aten::_add_relu.Tensor": Explicit("direct", "float32", "add", lambda: ((_r(4, 4), _r(4, 4)), {"alpha": 2})),
    "aten::_add_relu.Scalar": Explicit("scalar", "float32", "add", lambda: ((_r(4, 4), 0.5), {})),
    "aten::_add_relu.out": Explicit("out", "float32", "add", lambda: ((_r(4, 4), _r(4, 4)), {"out": _out()})),
    "aten::_add_relu_.Tensor": Explicit("inplace", "float32", "add", lambda: ((_r(4, 4), _r(4, 4)), {})),
    "aten::_add_relu_.Scalar": Explicit("inplace", "float32", "add", lambda: ((_r(4, 4), 0.5), {})),
    "aten::_addmm_activation.out": Explicit("out", "float32", "addmm",
                                            lambda: ((_r(3), _r(2, 4), _r(4, 3)), {"use_gelu": True, "out": _out()})),
    "aten::_aminmax": Explicit("direct", "float32", "aminmax", lambda: ((_r(4, 5),), {})),
    "aten::_aminmax.dim": Explicit("direct", "float32", "aminmax", lambda: ((_r(4, 5), 1), {})),
    "aten::_assert_async": Explicit("direct", "float32", "add", lambda: ((torch.tensor(True),), {})),
    "aten::_assert_async.msg": Explicit("direct", "float32", "add", lambda: ((torch.tensor(1.0), "nonzero"), {})),
    "aten::_make_dep_token": Explicit("direct", "float32", "add", lambda: ((), {"device": torch.device("cpu")}),
                                      values=False),
    "aten::_functional_assert_async.msg": Explicit(
        "direct", "float32", "add",
        lambda: ((torch.tensor(True), "nonzero", torch.ops.aten._make_dep_token()), {}), values=False),
    "aten::_compute_linear_combination": Explicit("direct", "float32", "matmul", lambda: ((_r(3, 4), _r(2, 3)), {})),
    # it adds into an out= of the right size, which PyTorch assumes zero-filled
    "aten::_compute_linear_combination.out": Explicit("out", "float32", "matmul",
                                                      lambda: ((_r(3, 4), _r(2, 3)), {"out": torch.zeros(2, 4)})),
    "aten::_int_mm": Explicit("direct", "int8", "mm", lambda: ((torch.randint(-8, 8, (32, 16), dtype=torch.int8),
                                                                torch.randint(-8, 8, (16, 32), dtype=torch.int8)), {})),
    "aten::_int_mm.out": Explicit("out", "int8", "mm", lambda: ((torch.randint(-8, 8, (32, 16), dtype=torch.int8),
                                                                 torch.randint(-8, 8, (16, 32), dtype=torch.int8)),
                                                                {"out": torch.empty(32, 32, dtype=torch.int32)})),
    "aten::_fused_adam_": Explicit("inplace", "float32", "add", lambda: _adam(False)),
    "aten::_fused_adam_.tensor_lr": Explicit("inplace", "float32", "add", lambda: _adam(True)),
    "aten::_fused_adamw_": Explicit("inplace", "float32", "add", lambda: _adam(False)),
    "aten::_fused_adamw_.tensor_lr": Explicit("inplace", "float32", "add", lambda: _adam(True)),
    "aten::_fused_sgd_": Explicit("inplace", "float32", "add", lambda: _sgd(False)),
    "aten::_fused_sgd_.tensor_lr": Explicit("inplace", "float32", "add", lambda: _sgd(True)),
    "aten::_fused_adagrad_": Explicit("inplace", "float32", "add", lambda: _adagrad(False)),
    "aten::_fused_adagrad_.tensor_lr": Explicit("inplace", "float32", "add", lambda: _adagrad(True)),
    "aten::_amp_foreach_non_finite_check_and_unscale_": Explicit(
        "inplace", "float32", "mul", lambda: (([_r(3, 4), _r(5)], torch.zeros(()), torch.tensor(0.5)), {})),
    "aten::_amp_update_scale_": Explicit(
        "inplace", "float32", "mul",
        lambda: ((torch.tensor(1024.0), torch.tensor(3, dtype=torch.int32), torch.tensor(0.0), 2.0, 0.5, 4), {})),
    "aten::_masked_softmax": Explicit("direct", "float32", "softmax",
                                      lambda: ((_r(2, 3, 4), torch.rand(2, 3, 4) > 0.7, -1), {})),
    "aten::_masked_softmax_backward": Explicit(
        "direct", "float32", "softmax",
        lambda: ((_r(2, 3, 4), torch.softmax(_r(2, 3, 4), -1), torch.rand(2, 3, 4) > 0.7, -1), {})),
    "aten::_weight_norm_interface": Explicit("direct", "float32", "_batch_norm_with_update",
                                             lambda: ((_r(4, 3), _pos(4, 1), 0), {})),
    "aten::_weight_norm_interface_backward": Explicit("direct", "float32", "_batch_norm_with_update",
                                                      _weight_norm_backward),
    "aten::batch_norm_update_stats": Explicit("direct", "float32", "_batch_norm_with_update",
                                              lambda: ((_r(4, 3, 5), torch.zeros(3), torch.ones(3), 0.1), {})),
    "aten::glu_jvp": Explicit("direct", "float32", "nn.functional.glu",
                              lambda: ((_r(4, 3), _r(4, 6), _r(4, 6), 1), {})),
    "aten::glu_backward_jvp": Explicit("direct", "float32", "nn.functional.glu", _glu_backward_jvp),
    "aten::norm.ScalarOpt_dim_dtype": Explicit("direct", "float32", "norm",
                                               lambda: ((_r(4, 5), 2, [1], False), {"dtype": torch.float32})),
    "aten::norm.dtype_out": Explicit("out", "float32", "norm",
                                     lambda: ((_r(4, 5), 2, [1], False), {"dtype": torch.float32, "out": _out()})),
    "aten::range.out": Explicit("out", "float32", "arange", lambda: ((0, 10, 1.5), {"out": _out()})),
    "aten::is_set_to": Explicit("direct", "float32", "add", lambda: ((_r(3), _r(3)), {})),
    "aten::unique_dim_consecutive": Explicit(
        "direct", "float32", "unique_consecutive",
        lambda: ((torch.randint(0, 2, (6, 2)).float(), 0), {"return_inverse": True, "return_counts": True})),
    "aten::reflection_pad3d.out": Explicit("out", "float32", "nn.functional.pad.reflect",
                                           lambda: ((_r(1, 2, 3, 4, 5), [1, 1, 1, 1, 1, 1]), {"out": _out()})),
    "aten::reflection_pad3d_backward.grad_input": Explicit(
        "out", "float32", "nn.functional.pad.reflect",
        lambda: ((_r(1, 2, 5, 6, 7), _r(1, 2, 3, 4, 5), [1, 1, 1, 1, 1, 1]), {"grad_input": _out()})),
    "aten::replication_pad3d.out": Explicit("out", "float32", "nn.functional.pad.replicate",
                                            lambda: ((_r(1, 2, 3, 4, 5), [1, 1, 1, 1, 1, 1]), {"out": _out()})),
    "aten::replication_pad3d_backward.grad_input": Explicit(
        "out", "float32", "nn.functional.pad.replicate",
        lambda: ((_r(1, 2, 5, 6, 7), _r(1, 2, 3, 4, 5), [1, 1, 1, 1, 1, 1]), {"grad_input": _out()})),
    "aten::_upsample_lanczos2d_aa.out": Explicit(
        "out", "float32", "nn.functional.interpolate.bilinear",
        lambda: ((_r(1, 2, 4, 4), [8, 8], False, None, None), {"out": _out()})),
    "aten::_upsample_lanczos2d_aa_backward.grad_input": Explicit(
        "out", "float32", "nn.functional.interpolate.bilinear",
        lambda: ((_r(1, 2, 8, 8), [8, 8], [1, 2, 4, 4], False, None, None), {"grad_input": _out()})),
    "aten::_standard_gamma_grad": Explicit("direct", "float32", "add", lambda: ((_pos(10), _pos(10)), {})),
    "aten::_dirichlet_grad": Explicit("direct", "float32", "add", _dirichlet_grad),
    # Random draws: the device's generator need not give the CPU's numbers.
    "aten::random_": Explicit("inplace", "float32", "bernoulli", lambda: ((torch.empty(10),), {}), values=False),
    "aten::random_.to": Explicit("inplace", "float32", "bernoulli", lambda: ((torch.empty(10), 100), {}),
                                 values=False),
    "aten::bernoulli_.Tensor": Explicit("inplace", "float32", "bernoulli",
                                        lambda: ((torch.empty(10), torch.full((10,), 0.5)), {}), values=False),
    "aten::normal.float_Tensor": Explicit("scalar", "float32", "normal", lambda: ((0.0, _pos(10)), {}), values=False),
    "aten::binomial": Explicit("direct", "float32", "bernoulli",
                               lambda: ((torch.full((10,), 10.0), torch.full((10,), 0.5)), {}), values=False),
    "aten::poisson": Explicit("direct", "float32", "bernoulli", lambda: ((_pos(10) * 4,), {}), values=False),
    "aten::_standard_gamma": Explicit("direct", "float32", "bernoulli", lambda: ((_pos(10),), {}), values=False),
    "aten::_sample_dirichlet": Explicit("direct", "float32", "bernoulli", lambda: ((_pos(3, 4),), {}), values=False),
    "aten::randperm.generator_out": Explicit("out", "int64", "bernoulli",
                                             lambda: ((10,), {"generator": None, "out": _out(torch.int64)}),
                                             values=False),
}
