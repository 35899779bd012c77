#pragma once

#include "common/CaseId.h"

#include <set>
#include <string>
#include <vector>

namespace conform {

// Which cases of a suite to run.
struct Selection {
  std::string ops_regex;         // searched in the subject; empty: all
  std::set<std::string> dtypes;  // empty: all the suite lists
  std::set<std::string> checks;  // empty: all
};

// Filters the suite's cases (as its worker listed them) by the selection. Throws
// std::invalid_argument for a malformed regular expression, a duplicate case id in the
// listing, or a selection that matches nothing (naming which filter emptied it).
std::vector<CaseId> select_cases(const std::vector<CaseId>& listed, const Selection& selection);

}  // namespace conform
