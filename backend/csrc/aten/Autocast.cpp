// torch.autocast(device_type="neuron"): the ops of PyTorch's CUDA autocast policy run at the
// autocast dtype, in float32 or at their widest input dtype, as on Trainium (TorchNeuron keeps
// CUDA's lists). The lists are ATen's own (AT_FORALL_* in ATen/autocast_mode.h, shared so that
// backends register the same policy), registered here for AutocastPrivateUse1 as
// autocast_mode.cpp registers them for AutocastCUDA; every other op falls through.
#include "aten/Autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace neuronsim {
namespace {

// What CUDA's binary_cross_entropy does under autocast: refuse it (it is unsafe in float16),
// pointing at binary_cross_entropy_with_logits.
at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&,
                                       const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
              "layer.\nIn this case, combine the two layers using "
              "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss. "
              "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.");
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& autocast_policy() {
  // The names of the overloads the macros below register, from the same lists.
  static const std::vector<std::pair<std::string, std::string>> policy = [] {
    std::vector<std::pair<std::string, std::string>> entries;
#define NEURON_NAME1(OP) "aten::" #OP
#define NEURON_NAME2(OP, OVERLOAD) "aten::" #OP "." #OVERLOAD
// (OP) or (OP, OVERLOAD): ATen's argument counter, which counts the policy too (a placeholder here)
#define NEURON_NAME(...) \
  C10_CONCATENATE(NEURON_NAME, _KERNEL_OVERLOAD_NARG(__VA_ARGS__, policy))(__VA_ARGS__)
#define NEURON_LOWER_NAME(...) entries.emplace_back("lower_precision_fp", NEURON_NAME(__VA_ARGS__));
#define NEURON_FP32_NAME(...) entries.emplace_back("fp32", NEURON_NAME(__VA_ARGS__));
#define NEURON_OPT_DTYPE_NAME(...) \
  entries.emplace_back("fp32_set_opt_dtype", NEURON_NAME(__VA_ARGS__));
#define NEURON_APPEND_DTYPE_NAME(FUNC, NAME, ...) \
  entries.emplace_back("fp32_append_dtype", "aten::" NAME);
#define NEURON_PROMOTE_NAME(...) entries.emplace_back("promote", NEURON_NAME(__VA_ARGS__));
    AT_FORALL_LOWER_PRECISION_FP(NEURON_LOWER_NAME)
    AT_FORALL_FP32(NEURON_FP32_NAME)
    AT_FORALL_FP32_SET_OPT_DTYPE(NEURON_OPT_DTYPE_NAME)
    AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(NEURON_APPEND_DTYPE_NAME)
    AT_FORALL_PROMOTE(NEURON_PROMOTE_NAME)
    entries.emplace_back("banned", "aten::binary_cross_entropy");
    return entries;
  }();
  return policy;
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  // The lists' signatures name ATen's types unqualified (they are written inside at::autocast).
  using at::IntArrayRef;
  using at::Scalar;
  using at::ScalarType;
  using at::Tensor;
#define NEURON_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NEURON_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NEURON_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_LOWER_PRECISION_FP(NEURON_LOWER)
  AT_FORALL_FP32(NEURON_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NEURON_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
#define NEURON_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(NEURON_PROMOTE)
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN((&binary_cross_entropy_banned)));
}

}  // namespace neuronsim
