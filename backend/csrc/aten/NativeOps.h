#pragma once

#include <string>
#include <vector>

namespace neuronsim {

// Overload names ("aten::add.Tensor") of the ops that run natively on the device.
const std::vector<std::string>& native_ops();

}  // namespace neuronsim
