#pragma once

#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace conform {

// A case's evidence as the reports and expectations read it: its core (Vocabulary.h's
// kEvidenceCore), by name. The suite's other fields, its details, stay in the JSON.
struct Evidence {
  std::string message;
  std::string exception_type;
  std::optional<Where> where;
  std::string stage;
  std::string failing_op;
  std::vector<std::string> errors;
  std::string sample;

  // The core of a case's evidence. A field of another type, or a `where` the vocabulary does not
  // name, reads as absent: runs recorded before the core was typed stay readable.
  static Evidence read(const nlohmann::json& evidence);
};

}  // namespace conform
