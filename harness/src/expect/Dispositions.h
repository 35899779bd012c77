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

// One entry: the overloads it lists (exact names) and why.
struct DispositionEntry {
  Location where;
  Disposition disposition = Disposition::kNotApplicable;
  std::string reason;
  std::vector<std::string> overloads;
};

struct Dispositions {
  std::vector<DispositionEntry> entries;  // the entries without a problem
  std::vector<Problem> problems;
  // What the entries dispose of, by overload: what the ledger counts.
  Disposals disposals() const;
};

// ledger/dispositions.json in the first of `folders` (the skip-list folders a backend ships)
// that has one: the backend's dispositions of the overloads it does not reach.
std::optional<std::string> dispositions_in(const std::vector<std::string>& folders);

// Parses `text` as the dispositions file `file`, recording every problem (not JSON, unknown
// fields, a missing or empty reason, an unknown disposition, a name listed twice) instead of
// stopping at the first; an entry with a problem disposes of nothing. With `known`, a name that
// is no overload of it is a problem too.
Dispositions parse_dispositions(const std::string& text, const std::string& file,
                                const std::set<std::string>* known = nullptr);
// The same for a file on disk; a file that cannot be read is a problem.
Dispositions load_dispositions(const std::string& path,
                               const std::set<std::string>* known = nullptr);

}  // namespace conform
