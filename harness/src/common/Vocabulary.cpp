#include "common/Vocabulary.h"

namespace conform {

using nlohmann::json;

namespace {

const char* kind_name(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::kMatched:
      return "matched";
    case OutcomeKind::kFailure:
      return "failure";
    case OutcomeKind::kExpected:
      return "expected";
    case OutcomeKind::kNotRun:
      return "not_run";
    case OutcomeKind::kUnstable:
      return "unstable";
    case OutcomeKind::kUnverified:
      return "unchecked";
  }
  return "?";
}

template <typename Table>
json named_rows(const Table& table) {
  json rows = json::array();
  for (const auto& row : table) rows.push_back({{"name", row.name}, {"meaning", row.meaning}});
  return rows;
}

}  // namespace

json vocabulary_json() {
  json outcomes = json::array();
  for (const auto& o : kOutcomes) {
    outcomes.push_back({{"name", o.name},
                        {"letters", o.letters},
                        {"severity", o.severity},
                        {"kind", kind_name(o.kind)},
                        {"meaning", o.meaning}});
  }
  json statuses = json::array();
  for (const auto& s : kSubjectStatuses) {
    statuses.push_back(
        {{"name", s.name}, {"letter", std::string(1, s.letter)}, {"meaning", s.meaning}});
  }
  json core = json::array();
  for (const auto& f : kEvidenceCore)
    core.push_back({{"name", f.name}, {"type", f.type}, {"meaning", f.meaning}});
  return {{"outcomes", outcomes},
          {"categories", named_rows(kCategories)},
          {"modes", named_rows(kModes)},
          {"subject_statuses", statuses},
          {"routes", named_rows(kRoutes)},
          {"kernels", named_rows(kKernels)},
          {"op_verdicts", named_rows(kOpVerdicts)},
          {"run_statuses", named_rows(kRunStatuses)},
          {"wheres", named_rows(kWheres)},
          {"stages", named_rows(kStages)},
          {"evidence_flags", named_rows(kEvidenceFlags)},
          {"evidence_core", core},
          {"worker_exit_codes", {{"memory_limit", kExitMemoryLimit}}}};
}

void to_json(json& j, Outcome o) {
  j = name(o);
}

void from_json(const json& j, Outcome& o) {
  o = parse_outcome(j.get<std::string>());
}

void to_json(json& j, SubjectStatus s) {
  j = name(s);
}

void to_json(json& j, OpVerdict v) {
  j = name(v);
}

void from_json(const json& j, OpVerdict& v) {
  v = parse_named(kOpVerdicts, j.get<std::string>(), "verdict");
}

}  // namespace conform
