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
