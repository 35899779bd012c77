#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace neuronsim::engine {

// The eager engine: the boxed kernel behind every op of the native set. Per call it builds
// the op's signature (overload, input dtypes, shapes, strides, non-tensor arguments, modes),
// looks up the compiled plan in the CompileCache (compiling on a miss, which is where the
// dtype rules reject or downcast), runs the plan with ATen's CPU kernel over zero-copy views
// of device memory, and records the op as executed natively.
void run_native(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// "aten::add.Tensor": an op's overload name, as tracking and messages use it.
std::string overload_name(const c10::OperatorHandle& op);

// The in-memory cache key of a call (raw bytes; process-specific).
std::string memory_key(const c10::OperatorHandle& op, const torch::jit::Stack& stack);

// The readable signature a call compiles for, also the disk cache's key.
std::string signature(const c10::OperatorHandle& op, const torch::jit::Stack& stack);

}  // namespace neuronsim::engine
