#pragma once

#include "common/CaseId.h"
#include "common/Result.h"
#include "expect/LocatedJson.h"

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace conform {

// One expectation: which cases it matches (exact strings; "*" alone matches anything; a list
// matches any of its strings), what to do with them, and why.
struct Entry {
  Location where;
  std::vector<std::string> suite, subject, dtype, check;
  Mode mode = Mode::kXfail;
  Category category = Category::kUnsupportedOp;
  std::string reason;
  std::optional<std::string> issue;
  std::optional<std::string> torch;              // version range, e.g. ">=2.13,<2.15"
  std::optional<Outcome> expect_outcome;         // the failing outcome it expects
  std::optional<std::string> expect_message;     // text the error message must contain
  std::optional<std::string> expect_failing_op;  // the aten op the failure must name first
  // A tolerance entry's (mode tolerance): what the case's values are compared with instead of
  // the suite's own tolerance. Either may be left out (the suite's own then stands).
  std::optional<double> rtol, atol;

  bool matches(const CaseId& id) const;
  // Its case may pass or fail from one run to the next (category flaky, or expect: flaky): a
  // failure is rerun, and a pass is no news.
  bool expects_flaky() const {
    return category == Category::kFlaky || expect_outcome == Outcome::kFlaky;
  }
};

struct Skiplists {
  std::vector<Entry> entries;  // active entries (torch range includes the torch in use), file order
  std::vector<Problem> problems;  // anything malformed or contradictory: the run must not start
};

// Loads every *.json file of the given files and directories (sorted, so the order is stable),
// checking each entry against the documented format (skiplists/schema.json). `torch_version`
// selects the entries whose torch range includes it. A suite's own list (the not_runnable.json
// beside its suite.py: what no device can run) holds only that suite's `not_runnable` skip
// entries, and no other list holds any.
Skiplists load_skiplists(const std::vector<std::string>& paths, const std::string& torch_version);

// An entry as a list file holds it (skiplists/schema.json): the fields it gives, lists of one
// value as that value.
nlohmann::json entry_json(const Entry& e);

// The suites entries name, each once; an entry's "*" stands for `default_suite`.
std::set<std::string> suites_named(const std::vector<Entry>& entries,
                                   const std::string& default_suite);

// Each entry's subjects against the subjects of the suites it names ("*" stands for
// `default_suite`): a subject that names no case of any of them is a problem. `listed` holds the
// subjects of each suite that could be listed; an entry naming a suite that is not in it is not
// checked (a subject found in a listed suite of it is fine all the same).
struct SubjectCheck {
  std::vector<Problem> problems;
  std::size_t checked = 0;                       // entries whose every suite was listed
  std::map<std::string, std::size_t> unchecked;  // per suite not listed: the entries naming it
};
SubjectCheck check_subjects(const std::vector<Entry>& entries,
                            const std::map<std::string, std::set<std::string>>& listed,
                            const std::string& default_suite, const std::string& torch_version);

// Decides cases quickly: entries indexed by subject, the first matching entry in file order wins.
// Expectations (skip, xfail) and tolerances are two tables in one format: a case has at most one
// of each, the first of its kind that matches.
class Expectations {
 public:
  explicit Expectations(std::vector<Entry> entries);
  // The skip or xfail entry deciding the case, or null.
  const Entry* decide(const CaseId& id) const;
  // The tolerance entry the case's values are compared with, or null.
  const Entry* tolerance(const CaseId& id) const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  struct Index {
    std::unordered_map<std::string, std::vector<std::size_t>> by_subject;
    std::vector<std::size_t> any_subject;
  };
  const Entry* first_match(const Index& index, const CaseId& id) const;

  std::vector<Entry> entries_;
  Index expectations_, tolerances_;
};

// What the worker is given with a case a tolerance entry matches: {"rtol", "atol" (those the
// entry gives), "dtype" (its dtypes: the case's values at another dtype keep their own),
// "entry" (file:line)}.
nlohmann::json tolerance_request(const Entry& tolerance);

// The result recorded for a case an entry decided. A skip entry: `skip`, never run. An xfail
// entry applied to what was observed: a failure as expected is `xfail`; a pass is `xpass` (the
// entry is stale); a failure other than the one `expect` describes keeps its own outcome and
// records the mismatch. The deciding entry is part of the evidence either way.
CaseResult skipped_result(const Entry& entry, const std::string& case_id);
CaseResult apply_expectation(const Entry& entry, CaseResult observed);
bool is_expectation_mismatch(const CaseResult& result);

// The fields a skip-list file and an entry may have (skiplists/schema.json; a test holds the two
// to each other).
const std::set<std::string>& skiplist_file_fields();
const std::set<std::string>& skiplist_entry_fields();

// Compares dotted versions numerically ("2.13.0+cpu" reads as 2.13.0): <0, 0, >0.
int compare_versions(const std::string& a, const std::string& b);

}  // namespace conform
