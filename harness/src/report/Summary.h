#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// The ten-second summary of a run, printed at its end, rendered from its coverage model
// (Coverage.h):
// counts by outcome and by skip-list category, slowest cases, worst failures, run id.
std::string run_summary(const nlohmann::json& coverage, const std::string& db_path,
                        double wall_seconds, int jobs);

// One line on compiling, where the backend counts its compile cache (the headline's
// compile_cache): executables compiled and the seconds it took against the cases' whole time,
// what the cache held (memory, disk), and whether the run was cold or warm; empty otherwise.
std::string compile_line(const nlohmann::json& headline);

}  // namespace conform
