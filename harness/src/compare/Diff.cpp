#include "compare/Diff.h"

#include "common/Result.h"
#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace conform {

namespace {

std::vector<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// How far a match is from native: 0 pass, 1 host-only, 2 through the fallback; -1 otherwise.
int off_device(Outcome o) {
  return o == Outcome::kPass ? 0 : o == Outcome::kHostOnly ? 1 : o == Outcome::kFallback ? 2 : -1;
}

struct Section {
  const char* key;
  const char* title;
  const std::vector<Diff::Change>* changes;
};

std::vector<Section> sections(const Diff& d) {
  return {{"new_failures", "new failures", &d.new_failures},
          {"new_passes", "new passes", &d.new_passes},
          {"changed_errors", "changed errors", &d.changed_errors},
          {"now_fallback", "now through the fallback or computed on the host", &d.now_fallback},
          {"now_native", "now native", &d.now_native},
          {"now_skipped", "now skipped", &d.now_skipped},
          {"now_flaky", "now flaky (passed only when rerun)", &d.now_flaky},
          {"now_unverified", "now unverified (values not compared)", &d.now_unverified},
          {"subject_changes", "subject status changes", &d.subject_changes}};
}

struct OpSection {
  const char* key;
  const char* title;
  const std::vector<std::string>* items;
};

std::vector<OpSection> op_sections(const Diff& d) {
  return {{"added", "new cases", &d.added},
          {"removed", "removed cases", &d.removed},
          {"native_ops_lost", "aten ops no longer run natively", &d.native_ops_lost},
          {"native_ops_gained", "aten ops now run natively", &d.native_ops_gained},
          {"fallback_ops_new", "aten ops newly through the fallback", &d.fallback_ops_new},
          {"fallback_ops_gone", "aten ops no longer through the fallback", &d.fallback_ops_gone},
          {"host_only_ops_new", "aten ops newly computed on the host", &d.host_only_ops_new},
          {"host_only_ops_gone", "aten ops no longer computed on the host",
           &d.host_only_ops_gone}};
}

}  // namespace

bool Diff::empty() const {
  for (const auto& s : sections(*this))
    if (!s.changes->empty()) return false;
  for (const auto& s : op_sections(*this))
    if (!s.items->empty()) return false;
  return true;
}

Diff diff_snapshots(const Snapshot& a, const Snapshot& b) {
  Diff d;
  d.a = a.name, d.b = b.name;
  for (const auto& [id, before] : a.cases) {
    auto it = b.cases.find(id);
    if (it == b.cases.end()) {
      d.removed.push_back(id);
      continue;
    }
    const auto& after = it->second;
    const Diff::Change change{id, std::string(name(before.outcome)),
                              std::string(name(after.outcome)), before.message, after.message};
    if (before.outcome == after.outcome && before.message == after.message) continue;
    const auto expected_either_way = [](Outcome o) {
      return is_success(o) || o == Outcome::kXfail || o == Outcome::kFlaky;
    };
    if (after.flaky_expected && expected_either_way(before.outcome) &&
        expected_either_way(after.outcome))
      continue;  // its entry expects it to pass on one run and fail on another
    const bool was_matching = is_success(before.outcome) || before.outcome == Outcome::kFlaky;
    if (kind(after.outcome) == OutcomeKind::kNotRun) {
      d.now_skipped.push_back(change);
    } else if (after.outcome == Outcome::kFlaky) {
      if (before.outcome != Outcome::kFlaky) d.now_flaky.push_back(change);
    } else if (after.outcome == Outcome::kUnverified) {
      if (was_matching) d.now_unverified.push_back(change);
    } else if (was_matching && did_not_match(after.outcome)) {
      d.new_failures.push_back(change);
    } else if (!is_success(before.outcome) && is_success(after.outcome)) {
      d.new_passes.push_back(change);
    } else if (did_not_match(before.outcome) && did_not_match(after.outcome)) {
      d.changed_errors.push_back(change);
    } else if (off_device(after.outcome) > off_device(before.outcome)) {
      d.now_fallback.push_back(change);
    } else if (off_device(before.outcome) > 0 && after.outcome == Outcome::kPass) {
      d.now_native.push_back(change);
    }
  }
  for (const auto& [id, _] : b.cases)
    if (!a.cases.contains(id)) d.added.push_back(id);
  const auto sa = a.subject_statuses(), sb = b.subject_statuses();
  for (const auto& [subject, before] : sa) {
    auto it = sb.find(subject);
    if (it != sb.end() && it->second != before)
      d.subject_changes.push_back(
          {subject, std::string(name(before)), std::string(name(it->second)), "", ""});
  }
  d.native_ops_lost = minus(a.native_ops, b.native_ops);
  d.native_ops_gained = minus(b.native_ops, a.native_ops);
  d.fallback_ops_new = minus(b.fallback_ops, a.fallback_ops);
  d.fallback_ops_gone = minus(a.fallback_ops, b.fallback_ops);
  d.host_only_ops_new = minus(b.host_only_ops, a.host_only_ops);
  d.host_only_ops_gone = minus(a.host_only_ops, b.host_only_ops);
  return d;
}

std::string diff_text(const Diff& d) {
  std::string out = fmt::format("diff {} -> {}\n", d.a, d.b);
  if (d.empty()) return out + "  no change\n";
  for (const auto& s : sections(d)) {
    if (s.changes->empty()) continue;
    out += fmt::format("{} ({}):\n", s.title, s.changes->size());
    for (const auto& c : *s.changes) {
      out += fmt::format("  {}  {} -> {}{}\n", c.id, c.before, c.after,
                         c.after_message.empty() ? "" : "  " + c.after_message);
    }
  }
  for (const auto& s : op_sections(d)) {
    if (s.items->empty()) continue;
    out += fmt::format("{} ({}):\n", s.title, s.items->size());
    for (const auto& id : *s.items) out += fmt::format("  {}\n", id);
  }
  return out;
}

std::string diff_markdown(const Diff& d) {
  std::string out = fmt::format("### neuron-conform diff `{}` → `{}`\n\n", d.a, d.b);
  if (d.empty()) return out + "No change.\n";
  out += "| change | count |\n| --- | ---: |\n";
  for (const auto& s : sections(d)) out += fmt::format("| {} | {} |\n", s.title, s.changes->size());
  for (const auto& s : op_sections(d))
    out += fmt::format("| {} | {} |\n", s.title, s.items->size());
  for (const auto& s : sections(d)) {
    if (s.changes->empty()) continue;
    out += fmt::format(
        "\n#### {}\n\n| case | before | after | message |\n| --- | --- | --- | --- |\n", s.title);
    for (const auto& c : *s.changes) {
      out += fmt::format("| `{}` | {} | {} | {} |\n", md_cell(c.id), c.before, c.after,
                         md_cell(c.after_message));
    }
  }
  for (const auto& s : op_sections(d)) {
    if (s.items->empty()) continue;
    out += fmt::format("\n#### {}\n\n", s.title);
    for (const auto& id : *s.items) out += fmt::format("- `{}`\n", md_cell(id));
  }
  return out;
}

nlohmann::json diff_json(const Diff& d) {
  nlohmann::json out = {{"a", d.a}, {"b", d.b}};
  for (const auto& s : sections(d)) {
    auto& list = out[s.key] = nlohmann::json::array();
    for (const auto& c : *s.changes) {
      list.push_back({{"id", c.id},
                      {"before", c.before},
                      {"after", c.after},
                      {"before_message", c.before_message},
                      {"after_message", c.after_message}});
    }
  }
  for (const auto& s : op_sections(d)) out[s.key] = *s.items;
  return out;
}

}  // namespace conform
