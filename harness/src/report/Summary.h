#pragma once

#include "record/Store.h"

#include <string>

namespace conform {

// The ten-second summary of a run: counts by outcome, slowest cases, worst failures, run id.
std::string run_summary(Store& store, const std::string& run_id, double wall_seconds, int jobs);

}  // namespace conform
