#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <array>
#include <cstddef>

namespace neuronsim::engine {

// The eager engine: the boxed kernel behind every op of the native set. Per call it builds
// the op's signature (overload, input dtypes, shapes, strides, non-tensor arguments, modes),
// looks up the compiled plan in the CompileCache (compiling on a miss, which is where the
// dtype rules reject or downcast), runs the plan with ATen's CPU kernel over zero-copy views
// of device memory, and records the op as executed natively.
void run_native(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// A CPU kernel standing in for an op that has none on the CPU: the hooks PyTorch leaves to
// backends (convolution_overrideable, ...) are what the CPU's own op computes (aten::convolution).
struct CpuSubstitute {
  c10::OperatorHandle cpu_op;  // aten::convolution, resolved once by the kernel that uses it
  // Turns the op's arguments (from `first` on the stack, already bound to CPU views) into the
  // substitute's; null when they are the same.
  void (*adapt)(torch::jit::Stack& stack, std::size_t first);
};

// run_native, with `substitute`'s CPU kernel in place of the op's own.
void run_native_as(const c10::OperatorHandle& op, const CpuSubstitute& substitute,
                   torch::jit::Stack* stack);

// For the CPU fallback: when an out= argument is, or shares storage with, another argument of
// the call (cat([a, b], out=a)), or a written argument overlaps itself (an expanded out= or
// running mean), runs the op's CPU kernel over the engine's bindings, which keep that identity,
// sharing and geometry (at::native::cpu_fallback copies each argument apart, densely, and the
// CPU kernel would then accept an overlap it refuses, compute from inputs it no longer writes, or
// fail to copy an argument it never wrote back into overlapping memory).
// Computes nothing and returns false for any other call.
bool run_aliased_out(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The stages of one engine call, as the backend benchmark breaks a call's cost down.
enum class Stage { kDevice, kPlan, kBind, kKernel, kResults, kTracking, kFree };
inline constexpr std::size_t kStageCount = 7;
const char* stage_name(Stage stage);

// Runs `op` natively `iterations` times on copies of `args` (a warm cache is assumed) and
// returns the mean seconds spent in each stage, freeing the results included.
std::array<double, kStageCount> time_stages(const c10::OperatorHandle& op,
                                            const torch::jit::Stack& args, int iterations);

}  // namespace neuronsim::engine
