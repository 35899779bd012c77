#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace neuronsim::engine {

// Runs an op outside the native set on the CPU (inputs copied to the host, results back), as
// NEURONSIM_FALLBACK allows, and records it as a fallback op. Ops that the device refuses
// outright (complex, sparse conversions) raise here too.
void run_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace neuronsim::engine
