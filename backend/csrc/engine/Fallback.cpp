#include "engine/Fallback.h"

#include "engine/CallKey.h"
#include "engine/DeviceCheck.h"
#include "engine/Engine.h"
#include "engine/Options.h"
#include "engine/Rules.h"
#include "engine/Tracking.h"
#include "runtime/Errors.h"
#include "runtime/Executor.h"
#include "runtime/Generator.h"

#include <ATen/native/CPUFallback.h>

#include <mutex>
#include <unordered_set>

namespace neuronsim::engine {
namespace {

bool first_time(const std::string& op_name) {
  static std::mutex mutex;
  static std::unordered_set<std::string> seen;
  std::lock_guard lock(mutex);
  return seen.insert(op_name).second;
}

// The neuron device an op runs on: that of its first neuron tensor, else of its `device`
// argument (factories), else the current device (-1).
c10::DeviceIndex op_device(c10::ArrayRef<c10::IValue> args) {
  for (const c10::IValue& value : args) {
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().is_privateuseone()) {
      return value.toTensor().device().index();
    }
    if (value.isDevice() && value.toDevice().is_privateuseone()) return value.toDevice().index();
  }
  return -1;
}

}  // namespace

void run_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string op_name = overload_name(op);
  const auto args = torch::jit::last(*stack, op.schema().arguments().size());
  check_not_sparse_conversion(op);
  check_same_device(op, args);
  check_no_complex(op_name, args);
  const bool dynamic = has_data_dependent_shape(op, args);
  const std::string why =
      dynamic
          ? " has a data-dependent output shape, which neuron cannot compile (dynamic shapes are "
            "not supported)"
          : " is not in the neuron native op set";
  switch (fallback_mode()) {
    case FallbackMode::kError:
      TORCH_CHECK_NOT_IMPLEMENTED(false, op_name, " (", device_dtypes(args), ")", why,
                                  ", and NEURONSIM_FALLBACK=error forbids running it on the "
                                  "CPU. Set NEURONSIM_FALLBACK=allow or warn to let it fall "
                                  "back, or avoid the op.");
      break;
    case FallbackMode::kWarn:
      if (first_time(op_name)) {
        TORCH_WARN(op_name, " (", device_dtypes(args), ")", why,
                   "; running it on the CPU (NEURONSIM_FALLBACK=warn).");
      }
      break;
    case FallbackMode::kAllow:
      break;
  }
  drain(-1);  // the host reads and writes device memory: what is queued runs first
  // A random op draws from the device's generator, as its native kernels do (cpu_fallback
  // would hand the CPU kernel torch's CPU generator, or a neuron generator it refuses).
  bind_generators(op, *stack, op_device(args));
  // The CPU kernel's own error does not say which device op it came from; name it, keeping the
  // error's kind (throw_named).
  try {
    if (!run_aliased_out(op, stack)) at::native::cpu_fallback(op, stack);
  } catch (const c10::Error&) {
    rethrow_prefixed(std::current_exception(), op_name + " failed in the CPU fallback: ");
  }
  record_fallback(op);
}

}  // namespace neuronsim::engine
