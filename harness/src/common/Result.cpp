#include "common/Result.h"

#include "common/Evidence.h"
#include "common/Text.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

namespace {

// A field of evidence as text: a string as it is, anything else (a worker may send a number or a
// list) as its JSON.
std::string text_of(const nlohmann::json& object, const char* key, const std::string& fallback) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  const nlohmann::json& value = object[key];
  return value.is_string() ? value.get<std::string>() : json_text(value);
}

}  // namespace

std::string case_message(const nlohmann::json& evidence) {
  if (!evidence.is_object()) return {};
  if (evidence.contains("late_error")) {  // an error the device raised outside this case
    return fmt::format("raised late, at {}; rerun alone: {}", text_of(evidence, "surfaced_at", "?"),
                       text_of(evidence, "message", ""));
  }
  if (const Evidence core = Evidence::read(evidence); !core.message.empty()) return core.message;
  if (evidence.contains("first_failure")) {  // flaky: what went wrong before it passed
    const auto& f = evidence["first_failure"];
    return fmt::format("passed only on a rerun; first attempt {}: {}", text_of(f, "outcome", "?"),
                       text_of(f, "message", ""));
  }
  if (evidence.contains("signal")) return fmt::format("signal {}", json_text(evidence["signal"]));
  return {};
}

SubjectStatus subject_status(const OutcomeCounts& counts) {
  const auto n = [&](Outcome o) {
    auto it = counts.find(o);
    return it == counts.end() ? std::int64_t{0} : it->second;
  };
  std::int64_t total = 0, matched = 0;
  for (const auto& [outcome, count] : counts) {
    total += count;
    if (is_success(outcome)) matched += count;
  }
  if (total == n(Outcome::kSkip)) return SubjectStatus::kSkipped;
  if (matched == total) {
    if (n(Outcome::kFallback) > 0) return SubjectStatus::kFallback;
    if (n(Outcome::kHostOnly) > 0) return SubjectStatus::kHostOnly;
    return n(Outcome::kNativeUnknown) > 0 ? SubjectStatus::kNativeUnknown : SubjectStatus::kNative;
  }
  // A flaky case passed at least once: the subject is partial, never failing (nor native).
  return matched == 0 && n(Outcome::kFlaky) == 0 ? SubjectStatus::kFailing
                                                 : SubjectStatus::kPartial;
}

CaseResult CaseResult::from_worker_json(const nlohmann::json& line) {
  CaseResult r;
  try {
    r.case_id = line.at("case").get<std::string>();
    r.duration = line.at("duration").get<double>();
    r.evidence = line.value("evidence", nlohmann::json::object());
    if (!r.evidence.is_object())
      throw std::runtime_error(fmt::format("the evidence of {} is not a JSON object", r.case_id));
    for (const auto& route : kRoutes) {
      r.ops(route.value) =
          line.value(fmt::format("{}_ops", route.name), std::map<std::string, std::int64_t>{});
    }
    const std::string outcome = line.at("outcome").get<std::string>();
    const auto parsed = find_named(kOutcomes, outcome);
    if (!parsed)
      throw std::runtime_error(
          fmt::format("worker reported unknown outcome '{}' for {}", outcome, r.case_id));
    r.outcome = *parsed;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("malformed result from worker: {}", e.what()));
  }
  return r;
}

std::map<std::string, std::int64_t>& CaseResult::ops(Route route) {
  switch (route) {
    case Route::kNative:
      return native_ops;
    case Route::kFallback:
      return fallback_ops;
    case Route::kHostOnly:
      return host_only_ops;
  }
  throw std::logic_error("unknown route");
}

const std::map<std::string, std::int64_t>& CaseResult::ops(Route route) const {
  return const_cast<CaseResult&>(*this).ops(route);
}

nlohmann::json CaseResult::to_json() const {
  nlohmann::json out = {{"case", case_id},
                        {"outcome", std::string(name(outcome))},
                        {"duration", duration},
                        {"evidence", evidence}};
  for (const auto& route : kRoutes) out[fmt::format("{}_ops", route.name)] = ops(route.value);
  return out;
}

}  // namespace conform
