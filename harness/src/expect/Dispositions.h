#pragma once

// The backend's dispositions of the aten overloads no case reaches (docs/ledger.md): a reviewed
// table (skiplists/ledger/dispositions.json), {"description": ..., "entries": [{"disposition":
// "not_applicable" | "unreached", "reason": ..., "overloads": [...]}]}, read as the skip lists
// are (expect/LocatedJson.h): every problem named at its file, line and column.

#include "common/Ledger.h"
#include "expect/LocatedJson.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace conform {

// The file as read: its entries and its problems.
struct DispositionsFile {
  // One entry: the overloads it lists (exact names), their disposition and why.
  struct Entry {
    Location where;
    DispositionKind kind = DispositionKind::kNotApplicable;
    std::string reason;
    std::vector<std::string> overloads;
  };
  std::vector<Entry> entries;  // the entries without a problem
  std::vector<Problem> problems;
  // The entries' dispositions, by overload: what the ledger counts.
  DispositionsByOverload by_overload() const;
};

// ledger/dispositions.json in the first of `folders` (the skip-list folders a backend ships)
// that has one: the backend's dispositions of the overloads it does not reach.
std::optional<std::string> dispositions_in(const std::vector<std::string>& folders);

// Parses `text` as the dispositions file `file`, recording every problem (not JSON, unknown
// fields, a missing or empty reason, an unknown disposition, a name listed twice) instead of
// stopping at the first; an entry with a problem disposes of nothing. With `known`, a name that
// is no overload of it is a problem too.
DispositionsFile parse_dispositions(const std::string& text, const std::string& file,
                                    const std::set<std::string>* known = nullptr);
// The same for a file on disk; a file that cannot be read is a problem.
DispositionsFile load_dispositions(const std::string& path,
                                   const std::set<std::string>* known = nullptr);

}  // namespace conform
