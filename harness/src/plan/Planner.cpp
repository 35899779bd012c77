#include "plan/Planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>
#include <stdexcept>
#include <unordered_set>

namespace conform {

std::vector<CaseId> select_cases(const std::vector<CaseId>& listed, const Selection& selection) {
  std::unordered_set<std::string> seen;
  for (const CaseId& c : listed) {
    if (!seen.insert(c.str()).second) {
      throw std::invalid_argument(
          fmt::format("the suite lists case {} twice: case ids must be unique", c.str()));
    }
  }
  std::regex pattern;
  try {
    pattern = std::regex(selection.ops_regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(fmt::format("--ops '{}' is not a valid regular expression: {}",
                                            selection.ops_regex, e.what()));
  }
  std::vector<CaseId> by_subject, by_dtype, out;
  for (const CaseId& c : listed) {
    if (selection.ops_regex.empty() || std::regex_search(c.subject, pattern))
      by_subject.push_back(c);
  }
  for (const CaseId& c : by_subject) {
    if (selection.dtypes.empty() || selection.dtypes.contains(c.dtype)) by_dtype.push_back(c);
  }
  for (const CaseId& c : by_dtype) {
    if (selection.checks.empty() || selection.checks.contains(c.check)) out.push_back(c);
  }
  if (by_subject.empty()) {
    throw std::invalid_argument(
        fmt::format("--ops '{}' matches no subject of the suite ({} cases listed)",
                    selection.ops_regex, listed.size()));
  }
  if (by_dtype.empty()) {
    throw std::invalid_argument(
        fmt::format("--dtypes {} matches none of the {} selected cases' dtypes",
                    fmt::join(selection.dtypes, ","), by_subject.size()));
  }
  if (out.empty()) {
    throw std::invalid_argument(
        fmt::format("--checks {} matches none of the {} selected cases' checks",
                    fmt::join(selection.checks, ","), by_dtype.size()));
  }
  return out;
}

}  // namespace conform
