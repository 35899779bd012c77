#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

namespace conform {

// What diff and gate compare: the outcome of every case of a run, or of a baseline file.
struct Snapshot {
  struct Case {
    Outcome outcome = Outcome::kError;
    std::string message;  // first line of the error or mismatch, empty when none
  };
  std::string name;  // run id, or the baseline file's path
  std::string suite;
  std::map<std::string, Case> cases;
  std::set<std::string> native_ops;    // aten ops that ran natively in some case
  std::set<std::string> fallback_ops;  // aten ops that ran through the fallback in some case

  std::map<std::string, SubjectStatus> subject_statuses() const;
};

inline constexpr int kBaselineSchemaVersion = 1;

Snapshot snapshot_of_run(Store& store, const std::string& run_id);

// A baseline file written by `gate --write-baseline`. Throws naming the file and the problem
// (unreadable, not JSON, another schema version, malformed field).
Snapshot load_baseline(const std::string& path);
nlohmann::json baseline_json(const Snapshot& snapshot, const RunInfo& run);

}  // namespace conform
