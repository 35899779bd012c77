#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace neuronsim::engine {

// Which aten ops ran on the device, as TorchNeuron reports them: natively (executed by the
// engine, or by the runtime for copies) or through the CPU fallback. Keys are overload names
// such as "aten::add.Tensor"; values are call counts since the last clear.
void record_native(const std::string& op);
void record_fallback(const std::string& op);
std::map<std::string, std::int64_t> executed_ops();
std::map<std::string, std::int64_t> fallback_ops();
void clear_op_tracking();

}  // namespace neuronsim::engine
