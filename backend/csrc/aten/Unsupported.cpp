// Features the device does not have fail with a message naming the op and the reason,
// instead of PyTorch's generic "could not run ... with arguments from the backend".
#include <torch/library.h>

namespace neuronsim {
namespace {

void sparse_unsupported(const c10::OperatorHandle& op, torch::jit::Stack* /*stack*/) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, c10::toString(op.operator_name()),
                              ": sparse tensors are not supported on neuron. Keep sparse tensors "
                              "on the CPU, or use dense tensors on the device.");
}

at::Tensor make_dual_unsupported(const at::Tensor&, const at::Tensor&, int64_t) {
  TORCH_CHECK_NOT_IMPLEMENTED(false,
                              "aten::_make_dual: forward-mode AD (dual tensors) is not supported "
                              "on neuron. Compute the jvp on the CPU, or use reverse mode "
                              "(backward).");
}

}  // namespace

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_unsupported>());
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_make_dual", make_dual_unsupported);
}

}  // namespace neuronsim
