#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// The JSON document in `path`; throws std::runtime_error naming `what` (e.g. "policy") and the
// file when it cannot be read or is not JSON (with the parser's position).
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace conform
