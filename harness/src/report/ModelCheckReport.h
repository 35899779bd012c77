#pragma once

#include "check/ModelCheck.h"
#include "record/ModelHistory.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace conform {

// check-model's renderings (its JSON is check/ModelCheck.h's to_json): a judged model as text
// (the table of ops, then the probe, compile, placement and shapes sections) and as Markdown,
// for a pull request.
std::string model_check_text(const ModelCheckResult& result);
std::string model_check_markdown(const ModelCheckResult& result);

// --history: each model's recorded checks, oldest first, each with what changed since the one
// before; and the same as JSON (models, each with its checks and their changes).
std::string model_history_text(const std::vector<ModelCheckRecord>& records);
nlohmann::json model_history_json(const std::vector<ModelCheckRecord>& records);

}  // namespace conform
