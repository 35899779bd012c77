#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace conform {

// The JSON document in `path`; throws std::runtime_error naming `what` (e.g. "policy") and the
// file when it cannot be read or is not JSON (with the parser's position).
nlohmann::json read_json_file(const std::string& path, const std::string& what);

// Writes `text` beside `path` and renames it into place, so a reader never sees half a file;
// throws naming the file when it cannot be written.
void write_file(const std::filesystem::path& path, const std::string& text);

}  // namespace conform
