#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace conform {

// The outcomes of CONVENTIONS.md.
inline constexpr std::array<std::string_view, 9> kOutcomes = {
    "pass", "fallback", "fail", "error", "crash", "timeout", "skip", "xfail", "xpass"};

bool is_outcome(std::string_view text);
// The case ran and matched the CPU: pass, fallback, xpass.
bool is_success(std::string_view outcome);
// The case ran and did not match, unexpectedly: fail, error, crash, timeout.
bool is_failure(std::string_view outcome);
// The case ran and did not match, expectedly or not: a failure, or xfail.
bool did_not_match(std::string_view outcome);
// What a case's evidence says went wrong: its message (a crash's names the signal), else the
// signal; empty when nothing is recorded.
std::string case_message(const nlohmann::json& evidence);
// A subject's status from its outcome counts: native (all pass), fallback (all matched, some
// through the fallback), partial, failing (none matched), skipped (none ran).
std::string subject_status(const std::map<std::string, std::int64_t>& counts);

// What happened to one case in one run.
struct CaseResult {
  std::string case_id;
  std::string outcome;
  double duration = 0.0;  // seconds inside the worker (wall time for crash and timeout)
  nlohmann::json evidence = nlohmann::json::object();
  std::map<std::string, std::int64_t> native_ops;    // aten op -> calls
  std::map<std::string, std::int64_t> fallback_ops;  // aten op -> calls

  // Parses a worker's result line; throws std::runtime_error naming what is malformed.
  static CaseResult from_worker_json(const nlohmann::json& line);
};

}  // namespace conform
