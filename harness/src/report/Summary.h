#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// The ten-second summary of a run, printed at its end, rendered from its coverage model
// (Coverage.h):
// counts by outcome and by skip-list category, slowest cases, worst failures, run id.
std::string run_summary(const nlohmann::json& coverage, const std::string& db_path,
                        double wall_seconds, int jobs);

}  // namespace conform
