#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

namespace neuronsim::engine {

// Which aten ops ran on the device, as TorchNeuron reports them: natively (executed by the
// engine) or through the CPU fallback. Counted per operator on the hot path (no string is
// built per call); read as overload names such as "aten::add.Tensor" with call counts since
// the last clear.
void record_native(const c10::OperatorHandle& op);
// The native-call counter of one operator, for a kernel that knows its operator once: bumping
// it is record_native(op) without the lookup. Valid for the process (counters are never freed).
std::atomic<std::int64_t>& native_counter(const c10::OperatorHandle& op);
void record_fallback(const c10::OperatorHandle& op);
std::map<std::string, std::int64_t> executed_ops();
std::map<std::string, std::int64_t> fallback_ops();
void clear_op_tracking();

}  // namespace neuronsim::engine
