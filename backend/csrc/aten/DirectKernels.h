#pragma once

#include <string_view>
#include <vector>

namespace neuronsim {

// Whether an overload of the native op set ("add.Tensor") runs through a direct kernel
// (DirectKernels.cpp) rather than the boxed engine.
bool has_direct_kernel(std::string_view overload);
// Those overloads ("add.Tensor", ...), each also in the native op set.
const std::vector<std::string_view>& direct_kernel_ops();

}  // namespace neuronsim
