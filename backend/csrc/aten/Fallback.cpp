// Every aten op without a neuron kernel goes to the engine's tracked CPU fallback.
#include "engine/Fallback.h"

#include <torch/library.h>

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&neuronsim::engine::run_fallback>());
}
