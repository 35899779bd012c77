#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace conform {

// What diff and gate compare: the outcome of every case of a run, or of a baseline file.
struct Snapshot {
  struct Case {
    Outcome outcome = Outcome::kError;
    std::string message;  // first line of the error or mismatch, empty when none
    // A skip-list entry expects the case to pass on one run and fail on another (the outcome
    // depends on the host, or on chance): a move between a match and an expected failure is
    // no news. Known of a run's results (their evidence), not of a baseline file.
    bool flaky_expected = false;
  };
  std::string name;  // run id, or the baseline file's path
  std::string suite;
  std::map<std::string, Case> cases;
  std::set<std::string> native_ops;    // aten ops that ran natively in some case
  std::set<std::string> fallback_ops;  // aten ops that ran through the fallback in some case
  std::set<std::string> host_only_ops;  // aten ops whose kernel computed on the host somewhere

  std::map<std::string, SubjectStatus> subject_statuses() const;
};

// Version 2: one section per suite ("suites"); version 1 files (one suite) are still read.
inline constexpr int kBaselineSchemaVersion = 2;

Snapshot snapshot_of_run(Store& store, const std::string& run_id);

// The sections of a baseline file written by `gate --write-baseline`, one per suite. Throws
// naming the file and the problem (unreadable, not JSON, another schema version, malformed
// field, a case of another suite in a section).
std::vector<Snapshot> load_baselines(const std::string& path);
// A baseline file with one section per run (each of another suite).
nlohmann::json baseline_json(const std::vector<std::pair<Snapshot, RunInfo>>& runs);

}  // namespace conform
