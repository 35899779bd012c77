#pragma once

#include <string>
#include <vector>

namespace neuronsim {

// The aten overloads whose registered kernels compute on the host ("aten::searchsorted.Tensor").
std::vector<std::string> host_only_ops();

}  // namespace neuronsim
