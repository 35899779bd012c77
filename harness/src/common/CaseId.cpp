#include "common/CaseId.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <vector>

namespace conform {

CaseId CaseId::parse(std::string_view text) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const auto slash = text.find('/', start);
    fields.emplace_back(
        text.substr(start, slash == std::string_view::npos ? text.npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (fields.size() != 4) {
    throw std::invalid_argument(
        fmt::format("case id '{}' has {} field(s); expected suite/subject/dtype/check, e.g. "
                    "ops/add/float32/forward",
                    text, fields.size()));
  }
  static constexpr const char* kNames[] = {"suite", "subject", "dtype", "check"};
  for (std::size_t i = 0; i < 4; ++i) {
    if (fields[i].empty()) {
      throw std::invalid_argument(
          fmt::format("case id '{}' has an empty {} field (use '-' where a field does not apply)",
                      text, kNames[i]));
    }
    for (char c : fields[i]) {
      if (c <= ' ' || c == 0x7f) {
        throw std::invalid_argument(fmt::format(
            "case id '{}' contains a space or control character in its {} field", text, kNames[i]));
      }
    }
  }
  return {fields[0], fields[1], fields[2], fields[3]};
}

std::string CaseId::str() const {
  return fmt::format("{}/{}/{}/{}", suite, subject, dtype, check);
}

std::vector<std::vector<std::size_t>> sharing_groups(const std::vector<std::string>& ids) {
  std::map<std::string, std::size_t> group_of_key;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto [it, added] = group_of_key.emplace(CaseId::parse(ids[i]).sharing_key(), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace conform
