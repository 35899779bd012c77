// Every aten op without a neuron kernel runs on the CPU: inputs are copied to the host, the CPU
// kernel runs, results are copied back.
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

namespace neuronsim {
namespace {

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace neuronsim
