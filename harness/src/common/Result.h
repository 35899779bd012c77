#pragma once

#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace conform {

// What a case's evidence says went wrong: its message (a crash's names the signal), else the
// signal; empty when nothing is recorded.
std::string case_message(const nlohmann::json& evidence);

using OutcomeCounts = std::map<Outcome, std::int64_t>;
// A subject's status from its outcome counts: native (all pass), fallback (all matched, some
// through the fallback), partial (some matched, or flaky), failing (none matched), skipped
// (none ran).
SubjectStatus subject_status(const OutcomeCounts& counts);

// What happened to one case in one run.
struct CaseResult {
  std::string case_id;
  Outcome outcome = Outcome::kError;
  double duration = 0.0;  // seconds inside the worker (wall time for crash and timeout)
  nlohmann::json evidence = nlohmann::json::object();
  std::map<std::string, std::int64_t> native_ops;    // aten op -> calls
  std::map<std::string, std::int64_t> fallback_ops;  // aten op -> calls
  // aten op -> calls whose kernel, the backend's own, copied device data to the host
  std::map<std::string, std::int64_t> host_only_ops;

  // The op maps by route (Route's order), for code that treats the routes alike.
  std::map<std::string, std::int64_t>& ops(Route route);
  const std::map<std::string, std::int64_t>& ops(Route route) const;

  // Parses a worker's result line; throws std::runtime_error naming what is malformed.
  static CaseResult from_worker_json(const nlohmann::json& line);
  // The result in the worker's shape (what from_worker_json reads), as `query` prints it.
  nlohmann::json to_json() const;
};

}  // namespace conform
