#pragma once

#include "common/CaseId.h"
#include "execute/Worker.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace conform {

// What a suite offers, as one worker (started with --list) reports it, and what that worker
// said about itself (torch and backend versions, start-up time).
struct Listing {
  nlohmann::json hello;
  std::vector<CaseId> cases;
};

// Throws std::runtime_error with the worker's own one-line reason when it cannot start (for
// example an unimportable backend module).
Listing list_suite(const WorkerCommand& command, const std::string& log_path);

}  // namespace conform
