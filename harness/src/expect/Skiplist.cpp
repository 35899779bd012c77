#include "expect/Skiplist.h"

#include "common/Evidence.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace conform {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "fail, error, crash, timeout, fallback": what `expect` may name.
std::string expectable_names() {
  std::string out;
  for (const auto& o : kOutcomes)
    if (is_expectable(o.value)) (out += out.empty() ? "" : ", ") += o.name;
  return out;
}

bool version_in_range(const std::string& version, const std::string& range, std::string& error) {
  std::stringstream parts(range);
  std::string part;
  bool ok = true;
  while (std::getline(parts, part, ',')) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    std::string op;
    for (const char* candidate : {">=", "<=", "==", ">", "<"}) {
      if (part.rfind(candidate, 0) == 0) {
        op = candidate;
        break;
      }
    }
    const std::string bound = part.substr(op.size());
    if (op.empty() || bound.empty() ||
        bound.find_first_not_of("0123456789.") != std::string::npos) {
      error = fmt::format("torch range '{}': '{}' is not a comparison like >=2.13 or <2.15", range,
                          part);
      return false;
    }
    const int c = compare_versions(version, bound);
    ok = ok && ((op == ">=" && c >= 0) || (op == "<=" && c <= 0) || (op == "==" && c == 0) ||
                (op == ">" && c > 0) || (op == "<" && c < 0));
  }
  return ok;
}

// A match field: a string or a non-empty list of strings; "*" only as a whole value.
bool read_field(const json& entry, const char* name, std::vector<std::string>& out,
                std::string& error) {
  if (!entry.contains(name)) {
    out = {"*"};
    return true;
  }
  const json& value = entry[name];
  std::vector<std::string> values;
  if (value.is_string()) {
    values.push_back(value.get<std::string>());
  } else if (value.is_array() && !value.empty() &&
             std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); })) {
    values = value.get<std::vector<std::string>>();
  } else {
    error = fmt::format("'{}' must be a string or a non-empty list of strings", name);
    return false;
  }
  for (const auto& v : values) {
    if (v.empty()) {
      error = fmt::format("'{}' has an empty string", name);
      return false;
    }
    if (v != "*" && v.find('*') != std::string::npos) {
      error = fmt::format(
          "'{}': '{}' uses '*' inside a name; entries match exact names, '*' alone matches any",
          name, v);
      return false;
    }
  }
  out = values;
  return true;
}

bool field_covers(const std::vector<std::string>& wide, const std::vector<std::string>& narrow) {
  if (std::find(wide.begin(), wide.end(), "*") != wide.end()) return true;
  if (std::find(narrow.begin(), narrow.end(), "*") != narrow.end()) return false;
  return std::all_of(narrow.begin(), narrow.end(), [&](const std::string& v) {
    return std::find(wide.begin(), wide.end(), v) != wide.end();
  });
}

bool field_matches(const std::vector<std::string>& values, const std::string& v) {
  for (const auto& candidate : values) {
    if (candidate == "*" || candidate == v) return true;
  }
  return false;
}

// One entry checked against the documented format; every problem is reported, not the first.
class EntryReader {
 public:
  EntryReader(const json& e, Location where, std::vector<Problem>& problems)
      : e_(e), problems_(problems) {
    entry_.where = std::move(where);
  }

  // The entry, or nullopt when it has a problem. `active`: its torch range includes the torch
  // in use. `suite_list`: the suite whose own list the file is, if it is one (suite_owning).
  std::optional<Entry> read(const std::string& torch_version, bool& active,
                            const std::optional<std::string>& suite_list) {
    if (!e_.is_object()) {
      problem("an entry must be an object");
      return std::nullopt;
    }
    for (const auto& [key, _] : e_.items()) {
      if (!skiplist_entry_fields().contains(key))
        problem(fmt::format("unknown field '{}' (known: {})", key,
                            fmt::join(skiplist_entry_fields(), ", ")));
    }
    std::string error;
    for (auto [name, field] :
         {std::pair{"suite", &entry_.suite}, std::pair{"subject", &entry_.subject},
          std::pair{"dtype", &entry_.dtype}, std::pair{"check", &entry_.check}}) {
      if (!read_field(e_, name, *field, error)) problem(error);
    }
    read_mode_and_category();
    read_tolerance();
    read_owner(suite_list);
    entry_.reason =
        e_.contains("reason") && e_["reason"].is_string() ? e_["reason"].get<std::string>() : "";
    if (entry_.reason.find_first_not_of(" \t\n") == std::string::npos)
      problem("missing 'reason': say why, in words a user understands");
    if (e_.contains("issue")) {
      if (!e_["issue"].is_string())
        problem("'issue' must be a string (a link)");
      else
        entry_.issue = e_["issue"].get<std::string>();
    }
    active = read_torch(torch_version);
    if (e_.contains("expect")) read_expect(e_["expect"]);
    return valid_ ? std::optional(entry_) : std::nullopt;
  }

 private:
  void problem(const std::string& message) {
    problems_.push_back({entry_.where, message});
    valid_ = false;
  }

  void read_mode_and_category() {
    const std::string mode = e_.value("mode", ""), category = e_.value("category", "");
    const auto m = find_named(kModes, mode);
    const auto c = find_named(kCategories, category);
    if (m)
      entry_.mode = *m;
    else
      problem(fmt::format("'mode' must be one of: {}", names_of(kModes)));
    if (c)
      entry_.category = *c;
    else
      problem(fmt::format("unknown category '{}' (known: {})", category, names_of(kCategories)));
    if (m && c && *c == Category::kCrash && *m != Mode::kSkip)
      problem(fmt::format("a '{}' entry must have mode \"{}\": crashing cases are never run",
                          name(Category::kCrash), name(Mode::kSkip)));
  }

  // A tolerance entry replaces the suite's tolerance for the cases it matches: precision only, a
  // finite rtol or atol >= 0 (or both). Any other entry has neither.
  void read_tolerance() {
    const bool tolerance = entry_.mode == Mode::kTolerance;
    for (auto [field, value] : {std::pair{"rtol", &entry_.rtol}, std::pair{"atol", &entry_.atol}}) {
      if (!e_.contains(field)) continue;
      const json& v = e_[field];
      if (!tolerance)
        problem(
            fmt::format("'{}' belongs to mode \"{}\" entries only", field, name(Mode::kTolerance)));
      else if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        problem(fmt::format("'{}' must be a finite number >= 0, not {}", field, v.dump()));
      else
        *value = v.get<double>();
    }
    if (!tolerance) return;
    if (!e_.contains("rtol") && !e_.contains("atol"))
      problem("a tolerance entry gives 'rtol', 'atol' or both: what the values are compared with");
    if (entry_.category != Category::kPrecision)
      problem(fmt::format("a tolerance entry has category '{}': a tolerance is about precision",
                          name(Category::kPrecision)));
  }

  // A suite's own list says what no device can run, a backend's what the backend fails: neither
  // holds the other's entries, so a backend cannot hide a failure as the suite's.
  void read_owner(const std::optional<std::string>& suite_list) {
    const bool not_runnable = entry_.category == Category::kNotRunnable;
    if (!suite_list) {
      if (not_runnable)
        problem(
            fmt::format("category '{}' belongs to a suite's own list (<suite>/not_runnable.json, "
                        "beside its suite.py): a backend's list says what the backend fails",
                        name(Category::kNotRunnable)));
      return;
    }
    if (!not_runnable || entry_.mode != Mode::kSkip)
      problem(
          fmt::format("the {} suite's own list holds only category '{}', mode \"{}\" entries: "
                      "cases no device can run",
                      *suite_list, name(Category::kNotRunnable), name(Mode::kSkip)));
    if (!e_.contains("suite"))
      entry_.suite = {*suite_list};
    else if (entry_.suite != std::vector<std::string>{*suite_list})
      problem(fmt::format("'suite' must be '{}' (or left out): the list is that suite's own",
                          *suite_list));
  }

  bool read_torch(const std::string& torch_version) {
    if (!e_.contains("torch")) return true;
    if (!e_["torch"].is_string()) {
      problem("'torch' must be a version range string, e.g. \">=2.13,<2.15\"");
      return true;
    }
    entry_.torch = e_["torch"].get<std::string>();
    std::string error;
    const bool active = version_in_range(torch_version, *entry_.torch, error);
    if (!error.empty()) problem(error);
    return active;
  }

  void read_expect(const json& x) {
    if (entry_.mode != Mode::kXfail)
      problem("'expect' applies to xfail entries only: it records the failure expected");
    std::optional<std::string> outcome;
    if (x.is_string()) {
      outcome = x.get<std::string>();
    } else if (x.is_object()) {
      if (x.contains("outcome")) outcome = x.value("outcome", "");
      if (x.contains("message")) entry_.expect_message = x.value("message", "");
      if (x.contains("failing_op")) entry_.expect_failing_op = x.value("failing_op", "");
    } else {
      problem(
          "'expect' must be an outcome or {\"outcome\": ..., \"message\": ..., "
          "\"failing_op\": ...}");
    }
    if (!outcome) return;
    const auto parsed = find_named(kOutcomes, *outcome);
    if (parsed && is_expectable(*parsed)) {
      entry_.expect_outcome = parsed;
    } else {
      problem(fmt::format("'expect' outcome '{}' is not a failing outcome ({})", *outcome,
                          expectable_names()));
    }
  }

  const json& e_;
  std::vector<Problem>& problems_;
  Entry entry_;
  bool valid_ = true;
};

// The earlier entry of its kind (expectation or tolerance) that covers every case `entry` matches
// (so it can never decide one).
const Entry* covered_by(const Entry& entry, const std::vector<Entry>& earlier_entries) {
  const auto tolerance = [](const Entry& e) { return e.mode == Mode::kTolerance; };
  for (const Entry& earlier : earlier_entries) {
    if (tolerance(earlier) == tolerance(entry) && field_covers(earlier.suite, entry.suite) &&
        field_covers(earlier.subject, entry.subject) && field_covers(earlier.dtype, entry.dtype) &&
        field_covers(earlier.check, entry.check) && earlier.torch == entry.torch)
      return &earlier;
  }
  return nullptr;
}

// The suite whose own list `path` is: a not_runnable.json beside a suite's suite.py.
std::optional<std::string> suite_owning(const fs::path& path) {
  if (path.filename() != "not_runnable.json" || !fs::exists(path.parent_path() / "suite.py"))
    return std::nullopt;
  return fs::absolute(path).parent_path().filename().string();
}

void load_file(const fs::path& path, const std::string& torch_version, Skiplists& out,
               std::vector<Entry>& all_entries) {
  const auto table = read_located_table(path, skiplist_file_fields(), out.problems);
  if (!table) return;
  const std::optional<std::string> suite_list = suite_owning(path);
  const json& entries = table->root["entries"];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    bool active = true;
    std::optional<Entry> entry = EntryReader(entries[i], table->entries[i], out.problems)
                                     .read(torch_version, active, suite_list);
    if (!entry) continue;
    if (const Entry* earlier = covered_by(*entry, all_entries)) {
      const bool same = earlier->suite == entry->suite && earlier->subject == entry->subject &&
                        earlier->dtype == entry->dtype && earlier->check == entry->check;
      out.problems.push_back(
          {entry->where,
           fmt::format("{} the entry at {}: it can never decide a case",
                       same ? "duplicates" : "is shadowed by", earlier->where.str())});
      continue;
    }
    all_entries.push_back(*entry);
    if (active) out.entries.push_back(std::move(*entry));
  }
}

}  // namespace

const std::set<std::string>& skiplist_entry_fields() {
  static const std::set<std::string> fields{"suite", "subject",  "dtype",  "check",
                                            "mode",  "category", "reason", "issue",
                                            "torch", "expect",   "rtol",   "atol"};
  return fields;
}

const std::set<std::string>& skiplist_file_fields() {
  static const std::set<std::string> fields{"entries", "description", "version"};
  return fields;
}

namespace {

std::vector<std::string> suites_of(const Entry& e, const std::string& default_suite) {
  std::vector<std::string> out;
  for (const auto& s : e.suite) out.push_back(s == "*" ? default_suite : s);
  return out;
}

}  // namespace

std::set<std::string> suites_named(const std::vector<Entry>& entries,
                                   const std::string& default_suite) {
  std::set<std::string> out;
  for (const Entry& e : entries)
    for (auto& s : suites_of(e, default_suite)) out.insert(std::move(s));
  return out;
}

SubjectCheck check_subjects(const std::vector<Entry>& entries,
                            const std::map<std::string, std::set<std::string>>& listed,
                            const std::string& default_suite, const std::string& torch_version) {
  SubjectCheck out;
  for (const Entry& e : entries) {
    const std::vector<std::string> suites = suites_of(e, default_suite);
    bool all_listed = true;
    for (const auto& s : suites) {
      if (listed.contains(s)) continue;
      all_listed = false;
      ++out.unchecked[s];
    }
    if (all_listed) ++out.checked;
    for (const auto& subject : e.subject) {
      if (subject == "*") continue;
      const bool found = std::any_of(suites.begin(), suites.end(), [&](const std::string& s) {
        const auto it = listed.find(s);
        return it != listed.end() && it->second.contains(subject);
      });
      if (found || !all_listed) continue;
      out.problems.push_back(
          {e.where,
           fmt::format("subject '{}' names no case of suite{} '{}' in torch {}", subject,
                       suites.size() == 1 ? "" : "s", fmt::join(suites, "', '"), torch_version)});
    }
  }
  return out;
}

bool Entry::matches(const CaseId& id) const {
  return field_matches(suite, id.suite) && field_matches(subject, id.subject) &&
         field_matches(dtype, id.dtype) && field_matches(check, id.check);
}

int compare_versions(const std::string& a, const std::string& b) {
  // Each dot-separated part compared as a whole number of any length, by its digits (what
  // follows them, "+cpu", "a0", does not count; no digits count as 0): no conversion that a
  // long version, or "unknown", could overflow or throw.
  auto parts = [](const std::string& v) {
    std::vector<std::string> out;
    std::stringstream s(v.substr(0, v.find_first_of("+-abrc")));
    std::string item;
    while (std::getline(s, item, '.')) {
      const std::string digits = item.substr(0, item.find_first_not_of("0123456789"));
      const auto first = digits.find_first_not_of('0');
      out.push_back(first == std::string::npos ? "" : digits.substr(first));
    }
    return out;
  };
  auto pa = parts(a), pb = parts(b);
  const auto n = std::max(pa.size(), pb.size());
  pa.resize(n), pb.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (pa[i].size() != pb[i].size()) return pa[i].size() < pb[i].size() ? -1 : 1;
    if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

Skiplists load_skiplists(const std::vector<std::string>& paths, const std::string& torch_version) {
  Skiplists out;
  std::vector<fs::path> files;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<fs::path> found;
      for (const auto& f : fs::directory_iterator(p)) {
        if (f.path().extension() == ".json" && f.path().filename() != "schema.json")
          found.push_back(f.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p)) {
      files.emplace_back(p);
    } else {
      out.problems.push_back({{p}, "no such skip-list file or directory"});
    }
  }
  std::vector<Entry> all;
  for (const auto& f : files) load_file(f, torch_version, out, all);
  return out;
}

Expectations::Expectations(std::vector<Entry> entries) : entries_(std::move(entries)) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Index& index = entries_[i].mode == Mode::kTolerance ? tolerances_ : expectations_;
    const auto& subjects = entries_[i].subject;
    if (std::find(subjects.begin(), subjects.end(), "*") != subjects.end()) {
      index.any_subject.push_back(i);
    } else {
      for (const auto& s : subjects) index.by_subject[s].push_back(i);
    }
  }
}

const Entry* Expectations::decide(const CaseId& id) const {
  return first_match(expectations_, id);
}

const Entry* Expectations::tolerance(const CaseId& id) const {
  return first_match(tolerances_, id);
}

const Entry* Expectations::first_match(const Index& index, const CaseId& id) const {
  std::optional<std::size_t> best;
  if (auto it = index.by_subject.find(id.subject); it != index.by_subject.end()) {
    for (std::size_t i : it->second) {
      if (entries_[i].matches(id)) {
        best = i;
        break;
      }
    }
  }
  for (std::size_t i : index.any_subject) {
    if (best && i > *best) break;
    if (entries_[i].matches(id)) {
      best = i;
      break;
    }
  }
  return best ? &entries_[*best] : nullptr;
}

json entry_json(const Entry& e) {
  const auto field = [](const std::vector<std::string>& values) {
    return values.size() == 1 ? json(values[0]) : json(values);
  };
  json out{{"suite", field(e.suite)}, {"subject", field(e.subject)}, {"dtype", field(e.dtype)},
           {"check", field(e.check)}, {"mode", name(e.mode)},        {"category", name(e.category)},
           {"reason", e.reason}};
  if (e.issue) out["issue"] = *e.issue;
  if (e.torch) out["torch"] = *e.torch;
  if (e.rtol) out["rtol"] = *e.rtol;
  if (e.atol) out["atol"] = *e.atol;
  json expect = json::object();
  if (e.expect_outcome) expect["outcome"] = name(*e.expect_outcome);
  if (e.expect_message) expect["message"] = *e.expect_message;
  if (e.expect_failing_op) expect["failing_op"] = *e.expect_failing_op;
  if (expect.size() == 1 && e.expect_outcome)
    out["expect"] = name(*e.expect_outcome);
  else if (!expect.empty())
    out["expect"] = expect;
  return out;
}

json tolerance_request(const Entry& tolerance) {
  json out{{"dtype", tolerance.dtype}, {"entry", tolerance.where.str()}};
  if (tolerance.rtol) out["rtol"] = *tolerance.rtol;
  if (tolerance.atol) out["atol"] = *tolerance.atol;
  return out;
}

namespace {
json entry_evidence(const Entry& e) {
  json out{{"entry", e.where.str()},
           {"mode", name(e.mode)},
           {"category", name(e.category)},
           {"reason", e.reason}};
  if (e.issue) out["issue"] = *e.issue;
  if (e.expects_flaky()) out["expects_flakiness"] = true;  // diff, gate: pass or xfail, no news
  return out;
}
}  // namespace

CaseResult skipped_result(const Entry& entry, const std::string& case_id) {
  return CaseResult{case_id, Outcome::kSkip, 0.0, {{"skiplist", entry_evidence(entry)}}, {}, {},
                    {}};
}

CaseResult apply_expectation(const Entry& entry, CaseResult observed) {
  observed.evidence["skiplist"] = entry_evidence(entry);
  observed.evidence["observed_outcome"] = observed.outcome;
  // A test that skipped itself (upstream's SkipTest) proves nothing about its entry either.
  if (observed.outcome == Outcome::kSkip) return observed;
  // A flaky case that did not flake this time proves nothing about its entry: it stays a pass.
  if (entry.expects_flaky() && is_success(observed.outcome)) return observed;
  // Matched with its route unobserved: an entry expecting the fallback can be neither confirmed
  // nor refuted; one expecting a failure is stale.
  if (observed.outcome == Outcome::kNativeUnknown && entry.expect_outcome == Outcome::kFallback)
    return observed;
  if (observed.outcome == Outcome::kPass || observed.outcome == Outcome::kNativeUnknown) {
    observed.outcome = Outcome::kXpass;
    return observed;
  }
  // Ran without error, its values unseen: the failure expected did not happen, but no pass either.
  if (observed.outcome == Outcome::kUnverified) return observed;
  const bool fell_back = observed.outcome == Outcome::kFallback;
  if (fell_back && entry.expect_outcome != Outcome::kFallback) {
    // It ran correctly (through the fallback): the failure it expected is gone.
    observed.outcome = Outcome::kXpass;
    return observed;
  }
  const Evidence seen = Evidence::read(observed.evidence);
  // An entry expecting flakiness expects a pass or a failure: every attempt failing is its
  // failing side (the host decides which side, as a vector width does), not a new failure.
  const bool outcome_ok =
      !entry.expect_outcome || *entry.expect_outcome == observed.outcome ||
      (entry.expect_outcome == Outcome::kFlaky && observed.outcome == Outcome::kFail);
  const bool message_ok =
      !entry.expect_message || seen.message.find(*entry.expect_message) != std::string::npos;
  const bool op_ok = !entry.expect_failing_op || seen.failing_op == *entry.expect_failing_op;
  if (outcome_ok && message_ok && op_ok) {
    observed.outcome = Outcome::kXfail;
  } else {
    // A failure, but not the one recorded: a new defect behind a known one is news.
    observed.evidence["expectation_mismatch"] = {
        {"expected_outcome",
         entry.expect_outcome ? std::string(name(*entry.expect_outcome)) : "any failure"},
        {"expected_message", entry.expect_message.value_or("")},
        {"expected_failing_op", entry.expect_failing_op.value_or("")}};
    if (is_failure(observed.outcome)) observed.outcome = Outcome::kXfailChanged;
  }
  return observed;
}

bool is_expectation_mismatch(const CaseResult& r) {
  return r.evidence.contains("expectation_mismatch");
}

}  // namespace conform
