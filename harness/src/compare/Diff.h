#pragma once

#include "compare/Snapshot.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace conform {

// What changed between two snapshots A (before) and B (after), case by case.
struct Diff {
  struct Change {
    std::string id;  // a case id, or a subject for subject_changes
    std::string before, after;
    std::string before_message, after_message;
  };
  std::string a, b;
  std::vector<Change> new_failures;    // matched (or flaky) in A; fails in B
  std::vector<Change> new_passes;      // did not match in A; matches in B
  std::vector<Change> changed_errors;  // fails in both, with another outcome or message
  std::vector<Change> now_fallback;    // pass -> host-only -> fallback: an op left the device
  std::vector<Change> now_native;      // fallback or host-only -> pass
  std::vector<Change> now_skipped;     // ran in A, skipped in B
  std::vector<Change> now_flaky;       // flaky in B, not in A: passed only when rerun
  std::vector<Change> now_unverified;  // matched in A; in B some values could not be compared
  std::vector<std::string> added, removed;
  std::vector<Change> subject_changes;  // per subject status: native, fallback, partial, ...
  std::vector<std::string> native_ops_lost, native_ops_gained;
  std::vector<std::string> fallback_ops_new, fallback_ops_gone;
  std::vector<std::string> host_only_ops_new, host_only_ops_gone;

  bool empty() const;
};

Diff diff_snapshots(const Snapshot& a, const Snapshot& b);

std::string diff_text(const Diff& d);
std::string diff_markdown(const Diff& d);
nlohmann::json diff_json(const Diff& d);

}  // namespace conform
