#include "common/JsonFile.h"

#include <fmt/format.h>

#include <fstream>

namespace conform {

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {} {}", what, path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{} {} is not JSON: {}", what, path, e.what()));
  }
}

}  // namespace conform
