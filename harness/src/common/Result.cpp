#include "common/Result.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace conform {

bool is_outcome(std::string_view text) {
  return std::find(kOutcomes.begin(), kOutcomes.end(), text) != kOutcomes.end();
}

bool is_success(std::string_view o) {
  return o == "pass" || o == "fallback" || o == "xpass";
}

bool is_failure(std::string_view o) {
  return o == "fail" || o == "error" || o == "crash" || o == "timeout";
}

bool did_not_match(std::string_view o) {
  return is_failure(o) || o == "xfail";
}

std::string case_message(const nlohmann::json& evidence) {
  if (evidence.contains("message")) return evidence["message"].get<std::string>();
  if (evidence.contains("signal")) return fmt::format("signal {}", evidence["signal"].dump());
  return {};
}

std::string subject_status(const std::map<std::string, std::int64_t>& counts) {
  const auto n = [&](const char* o) {
    auto it = counts.find(o);
    return it == counts.end() ? std::int64_t{0} : it->second;
  };
  std::int64_t total = 0;
  for (const auto& [_, v] : counts) total += v;
  const std::int64_t matched = n("pass") + n("fallback") + n("xpass");
  if (total == n("skip")) return "skipped";
  if (matched == total) return n("fallback") == 0 ? "native" : "fallback";
  return matched == 0 ? "failing" : "partial";
}

CaseResult CaseResult::from_worker_json(const nlohmann::json& line) {
  CaseResult r;
  try {
    r.case_id = line.at("case").get<std::string>();
    r.outcome = line.at("outcome").get<std::string>();
    r.duration = line.at("duration").get<double>();
    r.evidence = line.value("evidence", nlohmann::json::object());
    r.native_ops = line.value("native_ops", std::map<std::string, std::int64_t>{});
    r.fallback_ops = line.value("fallback_ops", std::map<std::string, std::int64_t>{});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("malformed result from worker: {}", e.what()));
  }
  if (!is_outcome(r.outcome)) {
    throw std::runtime_error(
        fmt::format("worker reported unknown outcome '{}' for {}", r.outcome, r.case_id));
  }
  return r;
}

}  // namespace conform
