#include "common/Result.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace conform {

bool is_outcome(std::string_view text) {
  return std::find(kOutcomes.begin(), kOutcomes.end(), text) != kOutcomes.end();
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
