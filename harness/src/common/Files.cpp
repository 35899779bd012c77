#include "common/Files.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace conform {

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {} {}", what, path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range
    throw std::runtime_error(fmt::format("{} {} is not JSON: {}", what, path, e.what()));
  }
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {}", partial.string()));
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
}

}  // namespace conform
