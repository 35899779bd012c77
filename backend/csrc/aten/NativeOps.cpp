// The native op set: aten overloads the engine compiles and runs on the device. Everything
// else reaches the device through the CPU fallback (Fallback.cpp) and is reported as such.
//
// Chosen so that small transformer models and convolutional blocks train without fallback in
// float32 and bfloat16.
// Composite ops (linear, matmul, layer_norm, rms_norm, dropout, scaled_dot_product_attention,
// ...) are not listed: PyTorch decomposes them into these before they reach a backend, and
// registering a backend kernel for them would bypass their autograd formulas. Factories
// without tensor inputs are the runtime's (empty, then a fill or an out= op from this list).
// backend/tests/python/test_engine.py checks that every name resolves to an aten overload.
#include "aten/NativeOps.h"

#include "aten/DirectKernels.h"
#include "engine/Engine.h"
#include "engine/Tracking.h"
#include "runtime/CpuView.h"

#include <torch/library.h>

namespace neuronsim {
namespace {

// Kept compact, several overloads a line (clang-format would put one per line).
// clang-format off
constexpr const char* kEngineOps[] = {
    // elementwise arithmetic
    "add.Tensor", "add.Scalar", "add.out", "add.Scalar_out", "add_.Tensor", "add_.Scalar",
    "sub.Tensor", "sub.Scalar", "sub.out", "sub.Scalar_out", "sub_.Tensor", "sub_.Scalar",
    "rsub.Tensor", "rsub.Scalar", "rsub.Tensor_out", "rsub.Scalar_out", "mul.Tensor",
    "mul.Scalar", "mul.out", "mul.Scalar_out", "mul_.Tensor", "mul_.Scalar", "div.Tensor",
    "div.Scalar", "div.Tensor_mode", "div.Scalar_mode", "div.out", "div.out_mode",
    "div.Scalar_out", "div.Scalar_mode_out", "div_.Tensor", "div_.Tensor_mode", "div_.Scalar",
    "div_.Scalar_mode", "neg", "neg.out", "neg_", "reciprocal", "reciprocal.out", "reciprocal_",
    "pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow.Scalar", "pow.Tensor_Tensor_out",
    "pow.Scalar_out", "pow.Tensor_Scalar_out", "pow_.Scalar", "pow_.Tensor", "sqrt", "sqrt.out",
    "sqrt_", "rsqrt", "rsqrt.out", "rsqrt_", "exp", "exp.out", "exp_", "exp2", "exp2.out",
    "exp2_", "expm1", "expm1.out", "expm1_", "log", "log.out", "log_", "log2", "log2.out",
    "log2_", "log1p", "log1p.out", "log1p_", "log10", "log10.out", "log10_", "abs", "abs.out",
    "abs_", "sign", "sign.out", "sign_", "clamp", "clamp.Tensor", "clamp.out", "clamp.Tensor_out",
    "clamp_", "clamp_.Tensor", "clamp_min", "clamp_min.Tensor", "clamp_min.out",
    "clamp_min.Tensor_out", "clamp_min_", "clamp_min_.Tensor", "clamp_max", "clamp_max.Tensor",
    "clamp_max.out", "clamp_max.Tensor_out", "clamp_max_", "clamp_max_.Tensor", "maximum",
    "maximum.out", "minimum", "minimum.out", "floor", "floor.out", "floor_", "ceil", "ceil.out",
    "ceil_", "round", "round.decimals", "round.out", "round.decimals_out", "round_",
    "round_.decimals", "trunc", "trunc.out", "trunc_", "frac", "frac.out", "frac_", "fmod.Tensor",
    "fmod.Scalar", "fmod.Tensor_out", "fmod.Scalar_out", "fmod_.Tensor", "fmod_.Scalar",
    "remainder.Tensor", "remainder.Scalar", "remainder.Scalar_Tensor", "remainder.Tensor_out",
    "remainder.Scalar_out", "remainder.Scalar_Tensor_out", "remainder_.Tensor",
    "remainder_.Scalar", "floor_divide", "floor_divide.Scalar", "floor_divide.out",
    "floor_divide.Scalar_out", "floor_divide_.Tensor", "floor_divide_.Scalar", "addcmul",
    "addcmul.out", "addcmul_", "addcdiv", "addcdiv.out", "addcdiv_", "lerp.Scalar", "lerp.Tensor",
    "lerp.Scalar_out", "lerp.Tensor_out", "lerp_.Scalar", "lerp_.Tensor",
    // comparisons and logic
    "eq.Tensor", "eq.Scalar", "eq.Scalar_out", "eq.Tensor_out", "eq_.Scalar", "eq_.Tensor",
    "ne.Tensor", "ne.Scalar", "ne.Scalar_out", "ne.Tensor_out", "ne_.Scalar", "ne_.Tensor",
    "lt.Tensor", "lt.Scalar", "lt.Scalar_out", "lt.Tensor_out", "lt_.Scalar", "lt_.Tensor",
    "le.Tensor", "le.Scalar", "le.Scalar_out", "le.Tensor_out", "le_.Scalar", "le_.Tensor",
    "gt.Tensor", "gt.Scalar", "gt.Scalar_out", "gt.Tensor_out", "gt_.Scalar", "gt_.Tensor",
    "ge.Tensor", "ge.Scalar", "ge.Scalar_out", "ge.Tensor_out", "ge_.Scalar", "ge_.Tensor",
    "logical_not", "logical_not.out", "logical_not_", "logical_and", "logical_and.out",
    "logical_and_", "logical_or", "logical_or.out", "logical_or_", "logical_xor",
    "logical_xor.out", "logical_xor_", "bitwise_and.Tensor", "bitwise_and.Scalar",
    "bitwise_and.Scalar_Tensor", "bitwise_and.Tensor_out", "bitwise_and.Scalar_out",
    "bitwise_and.Scalar_Tensor_out", "bitwise_and_.Tensor", "bitwise_and_.Scalar",
    "bitwise_or.Tensor", "bitwise_or.Scalar", "bitwise_or.Scalar_Tensor", "bitwise_or.Tensor_out",
    "bitwise_or.Scalar_out", "bitwise_or.Scalar_Tensor_out", "bitwise_or_.Tensor",
    "bitwise_or_.Scalar", "bitwise_xor.Tensor", "bitwise_xor.Scalar", "bitwise_xor.Scalar_Tensor",
    "bitwise_xor.Tensor_out", "bitwise_xor.Scalar_out", "bitwise_xor.Scalar_Tensor_out",
    "bitwise_xor_.Tensor", "bitwise_xor_.Scalar", "bitwise_not", "bitwise_not.out",
    "bitwise_not_", "isnan", "isnan.out", "isinf", "isinf.out", "isneginf", "isneginf.out",
    "isposinf", "isposinf.out",
    // activations
    "relu", "relu.out", "relu_", "gelu", "gelu.out", "gelu_", "gelu_backward",
    "gelu_backward.grad_input", "silu", "silu.out", "silu_", "silu_backward.grad_input",
    "sigmoid", "sigmoid.out", "sigmoid_", "sigmoid_backward", "sigmoid_backward.grad_input",
    "tanh", "tanh.out", "tanh_", "tanh_backward", "tanh_backward.grad_input",
    "threshold_backward", "threshold_backward.grad_input", "hardtanh", "hardtanh.out",
    "hardtanh_", "hardtanh_backward", "hardtanh_backward.grad_input", "leaky_relu",
    "leaky_relu.out", "leaky_relu_", "leaky_relu_backward", "leaky_relu_backward.grad_input",
    "elu", "elu.out", "elu_", "elu_backward", "elu_backward.grad_input", "softplus",
    "softplus.out", "softplus_backward", "softplus_backward.grad_input", "mish", "mish.out",
    "mish_", "erf", "erf.out", "erf_", "sin", "sin.out", "sin_", "cos", "cos.out", "cos_",
    // reductions
    "sum.dim_IntList", "sum", "sum.IntList_out", "sum.out", "mean", "mean.dim", "mean.out",
    "mean.dtype_out", "amax", "amax.out", "amin", "amin.out", "argmax", "argmax.out", "argmin",
    "argmin.out", "var.correction", "var.correction_out", "var_mean.correction",
    "var_mean.correction_out", "std.correction", "std.correction_out", "std_mean.correction",
    "std_mean.correction_out", "max", "max.dim", "max.dim_max", "max.unary_out", "min", "min.dim",
    "min.dim_min", "min.unary_out", "prod", "prod.dim_int", "prod.int_out", "prod.out", "all",
    "all.dim", "all.dims", "all.out", "all.dims_out", "all.all_out", "any", "any.dim", "any.dims",
    "any.out", "any.dims_out", "any.all_out", "logsumexp", "norm.Scalar", "norm.ScalarOpt_dim",
    "norm.ScalarOpt_dim_dtype", "norm.dtype_out", "norm.out", "norm.ScalarOpt_dtype",
    "norm.ScalarOpt_dtype_out", "norm.Scalar_out", "linalg_vector_norm", "linalg_vector_norm.out",
    "_softmax", "_softmax.out", "_softmax_backward_data", "_softmax_backward_data.out",
    "_log_softmax", "_log_softmax.out", "_log_softmax_backward_data",
    "_log_softmax_backward_data.out",
    // matmul family
    "mm", "mm.out", "bmm", "bmm.out", "addmm", "addmm.out", "addmm_", "baddbmm", "baddbmm.out",
    "baddbmm_", "addbmm", "addbmm.out", "addbmm_", "mv", "mv.out", "addmv", "addmv.out", "addmv_",
    "dot", "dot.out", "addr", "addr.out", "addr_",
    // indexing and layout
    "cat", "cat.out", "stack", "stack.out", "index_select", "index_select.out", "gather", "gather.out", "scatter.value",
    "scatter.src", "scatter.reduce", "scatter.value_reduce", "scatter.src_out",
    "scatter.value_out", "scatter.reduce_out", "scatter.value_reduce_out", "scatter_.src",
    "scatter_.value", "scatter_.reduce", "scatter_.value_reduce", "scatter_add",
    "scatter_add.out", "scatter_add_", "index.Tensor", "index.Tensor_out", "index_put_",
    "_index_put_impl_", "_index_put_impl", "_index_put_impl.out",
    "index_add", "index_add.out", "index_add_", "index_copy", "index_copy.out", "index_copy_",
    "embedding", "embedding.out", "embedding_dense_backward", "embedding_dense_backward.out",
    "where.self", "where.self_out", "masked_fill.Scalar", "masked_fill.Scalar_out",
    "masked_fill.Tensor", "masked_fill.Tensor_out", "masked_fill_.Scalar", "masked_fill_.Tensor",
    "slice_scatter.out", "select_scatter.out", "fill.Scalar", "fill.Scalar_out", "fill.Tensor",
    "fill.Tensor_out", "fill_.Scalar", "fill_.Tensor", "zero", "zero.out", "zero_", "flip",
    "flip.out", "roll", "roll.out", "sort", "sort.values", "sort.stable", "sort.values_stable",
    "topk", "topk.values", "isin.Tensor_Tensor", "isin.Tensor_Tensor_out", "isin.Tensor_Scalar",
    "isin.Tensor_Scalar_out", "isin.Scalar_Tensor", "isin.Scalar_Tensor_out", "histc.out",
    "pixel_shuffle", "pixel_shuffle.out", "pixel_unshuffle", "pixel_unshuffle.out", "narrow_copy",
    "narrow_copy.out",
    // padding (convolutions' reflect and replicate padding modes)
    "reflection_pad1d", "reflection_pad1d.out", "reflection_pad1d_backward",
    "reflection_pad1d_backward.grad_input", "reflection_pad2d", "reflection_pad2d.out",
    "reflection_pad2d_backward", "reflection_pad2d_backward.grad_input", "reflection_pad3d",
    "reflection_pad3d.out", "reflection_pad3d_backward", "reflection_pad3d_backward.grad_input",
    "replication_pad1d", "replication_pad1d.out", "replication_pad1d_backward",
    "replication_pad1d_backward.grad_input", "replication_pad2d", "replication_pad2d.out",
    "replication_pad2d_backward", "replication_pad2d_backward.grad_input", "replication_pad3d",
    "replication_pad3d.out", "replication_pad3d_backward", "replication_pad3d_backward.grad_input",
    // normalization and dropout
    "native_layer_norm", "native_layer_norm.out", "native_layer_norm_backward",
    "native_layer_norm_backward.out", "native_batch_norm", "native_batch_norm.out",
    "native_batch_norm_backward", "native_batch_norm_backward.out", "native_dropout_backward",
    "native_dropout_backward.out", "native_group_norm", "native_group_norm.out",
    "native_group_norm_backward", "native_group_norm_backward.out",
    // losses
    "nll_loss_forward", "nll_loss_forward.output", "nll_loss_backward",
    "nll_loss_backward.grad_input", "nll_loss2d_forward", "nll_loss2d_forward.output",
    "nll_loss2d_backward", "nll_loss2d_backward.grad_input", "mse_loss", "mse_loss.out",
    "mse_loss_backward", "mse_loss_backward.grad_input",
    // scans and factories
    "cumsum", "cumsum.out", "cumsum_", "cumprod", "cumprod.out", "cumprod_", "arange.start_out",
    "arange.out", "triu", "triu.out", "triu_", "tril", "tril.out", "tril_",
    "linspace.Tensor_Tensor", "linspace.Tensor_Scalar", "linspace.Scalar_Tensor", "linspace.out",
    "linspace.Tensor_Tensor_out", "linspace.Tensor_Scalar_out", "linspace.Scalar_Tensor_out",
    // random fills
    "normal.Tensor_float", "normal.Tensor_float_out", "normal.float_Tensor_out",
    "normal.float_Tensor", "normal.Tensor_Tensor", "normal.Tensor_Tensor_out",
    "normal.float_float_out", "normal.out", "normal_", "uniform", "uniform.out", "uniform_",
    "random.from", "random.from_out", "random.to", "random.to_out", "random", "random.out",
    "random_.from", "random_.to", "random_", "bernoulli", "bernoulli.out", "bernoulli.Tensor",
    "bernoulli.Tensor_out", "bernoulli.float_out", "bernoulli_.Tensor", "bernoulli_.float",
    "exponential", "exponential.out", "exponential_",

};
// clang-format on

c10::OperatorHandle cpu_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

// Convolution: PyTorch sends every convolution of a backend without a convolution kernel of
// its own to these two hooks; the engine runs them with the CPU's convolution.
// convolution_backward takes the bias's sizes after the weight (the hook does not): the
// output's channel count, which is the bias's length in every convolution.
void insert_bias_sizes(torch::jit::Stack& stack, std::size_t first) {
  const int64_t channels = stack[first].toTensor().size(1);
  stack.insert(stack.begin() + static_cast<std::ptrdiff_t>(first) + 3,
               c10::IValue(std::vector<int64_t>{channels}));
}

void convolution(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static const engine::CpuSubstitute substitute{cpu_op("aten::convolution"), nullptr};
  engine::run_native_as(op, substitute, stack);
}

void convolution_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static const engine::CpuSubstitute substitute{cpu_op("aten::convolution_backward"),
                                                insert_bias_sizes};
  engine::run_native_as(op, substitute, stack);
}

// histc of integers: the CPU has no integer histc, the device counts integer values in float32
// (what transformers' mixture-of-experts routing asks of an accelerator: torch.histc of expert
// ids); the result keeps the input's dtype, as on CUDA.
void histc(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto first = stack->size() - op.schema().arguments().size();
  const at::ScalarType dtype = (*stack)[first].toTensor().scalar_type();
  const bool integral = at::isIntegralType(dtype, /*includeBool=*/false);
  if (integral) (*stack)[first] = (*stack)[first].toTensor().to(at::kFloat);
  engine::run_native(op, stack);
  if (integral) stack->back() = stack->back().toTensor().to(dtype);
}

// native_dropout draws its mask from the device generator (the CPU kernel would use the CPU
// generator), so it is composed here from native ops rather than run as a CPU kernel.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  at::Tensor output, mask;
  if (input.numel() == 0) {
    output = input.clone();
    mask = at::empty_like(input, input.options().dtype(at::kBool));
  } else if (!train.has_value() || *train) {
    const double keep = 1.0 - p;
    const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
    mask = at::empty_like(input, input.options().dtype(at::kBool)).bernoulli_(keep);
    output = input.mul(mask).mul_(scale);
  } else {
    mask = at::ones_like(input, input.options().dtype(at::kBool));
    output = input.clone();
  }
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::native_dropout", "");
  engine::record_native(op);
  return {output, mask};
}

}  // namespace

const std::vector<std::string>& native_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (const char* name : kEngineOps) names.push_back(std::string("aten::") + name);
    names.emplace_back("aten::native_dropout");
    names.emplace_back("aten::histc");
    names.emplace_back("aten::convolution_overrideable");
    names.emplace_back("aten::convolution_backward_overrideable");
    return names;
  }();
  return ops;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : kEngineOps) {
    if (has_direct_kernel(name)) continue;  // registered unboxed by DirectKernels.cpp
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&engine::run_native>());
  }
  m.impl("native_dropout", native_dropout);
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolution>());
  m.impl("histc", torch::CppFunction::makeFromBoxedFunction<&histc>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&convolution_backward>());
}

}  // namespace neuronsim
