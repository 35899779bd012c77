#pragma once

#include <string>
#include <utility>
#include <vector>

namespace neuronsim {

// The neuron device's autocast policy, as registered for AutocastPrivateUse1 (Autocast.cpp):
// (policy, overload) pairs, policy one of "lower_precision_fp" (run at the autocast dtype),
// "fp32" (run in float32), "fp32_set_opt_dtype" (run in float32 unless a dtype is given),
// "fp32_append_dtype" (a float32 dtype argument appended), "promote" (the widest input dtype),
// "banned" (refused under autocast); overloads named "aten::mm", "aten::pow.Scalar".
const std::vector<std::pair<std::string, std::string>>& autocast_policy();

}  // namespace neuronsim
