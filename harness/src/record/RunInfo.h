#pragma once

#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace conform {

// One run of a suite against a backend.
struct RunInfo {
  std::string id;
  std::string suite;
  std::string status{name(RunStatus::kRunning)};  // common/Vocabulary.h: kRunStatuses
  std::string started_at;
  std::optional<std::string> ended_at;
  std::optional<std::string> label;
  std::int64_t seed = 0;
  std::string host;
  std::string torch_version;
  std::string backend_module;
  std::string backend_version;
  std::string harness_version;
  std::string device;
  std::optional<std::string> shard;
  std::string command;
  // What the worker's backend said of itself: {"native_ops": [...], "tracking": bool,
  // "device_memory": bool, ...} (docs/results-db.md).
  nlohmann::json backend_info = nlohmann::json::object();
  // What the suite declared of itself (common/SuiteDescription.h); {} when it declared nothing.
  nlohmann::json suite_info = nlohmann::json::object();
  // The options the run gave its suite (name -> text), passed to every worker it starts.
  nlohmann::json suite_options = nlohmann::json::object();
};

// The run as JSON, as the reports (coverage.json's "run") and `query` show it: its fields, the
// torch version as "torch", and its wall time ("duration_seconds", null while it runs).
nlohmann::json run_json(const RunInfo& run);

// The run a record of `query` describes (run_json's fields with backend_info, suite_info and
// suite_options): the inverse of query's record. std::invalid_argument naming the first field
// that is missing or of the wrong type.
RunInfo run_from_json(const nlohmann::json& record);

}  // namespace conform
