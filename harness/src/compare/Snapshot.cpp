#include "compare/Snapshot.h"

#include "common/CaseId.h"
#include "common/Files.h"
#include "common/Result.h"

#include <fmt/format.h>

namespace conform {

namespace {

std::string first_line(const nlohmann::json& evidence) {
  const std::string text = case_message(evidence);
  return text.substr(0, std::min(text.find('\n'), std::size_t{200}));
}

}  // namespace

std::map<std::string, SubjectStatus> Snapshot::subject_statuses() const {
  std::map<std::string, OutcomeCounts> counts;
  for (const auto& [id, c] : cases) ++counts[CaseId::parse(id).subject][c.outcome];
  std::map<std::string, SubjectStatus> out;
  for (const auto& [subject, n] : counts) out[subject] = subject_status(n);
  return out;
}

Snapshot snapshot_of_run(Store& store, const std::string& run_id) {
  Snapshot s;
  s.name = run_id;
  s.suite = store.run(run_id)->suite;
  for (const CaseResult& r : store.results(run_id)) {
    s.cases[r.case_id] = {r.outcome, first_line(r.evidence)};
    for (const auto& [op, _] : r.native_ops) s.native_ops.insert(op);
    for (const auto& [op, _] : r.fallback_ops) s.fallback_ops.insert(op);
  }
  return s;
}

nlohmann::json baseline_json(const Snapshot& s, const RunInfo& run) {
  nlohmann::json cases = nlohmann::json::object();
  for (const auto& [id, c] : s.cases) cases[id] = c.outcome;
  return {{"schema", "neuron-conform/baseline"},
          {"schema_version", kBaselineSchemaVersion},
          {"suite", s.suite},
          {"source_run", run.id},
          {"torch", run.torch_version},
          {"backend", run.backend_module + " " + run.backend_version},
          {"written_at", Store::now_utc()},
          {"native_ops", s.native_ops},
          {"fallback_ops", s.fallback_ops},
          {"cases", cases}};
}

Snapshot load_baseline(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "baseline");
  if (!j.is_object() || j.value("schema", "") != "neuron-conform/baseline") {
    throw std::runtime_error(fmt::format(
        "{} is not a neuron-conform baseline (no \"schema\": \"neuron-conform/baseline\")", path));
  }
  if (j.value("schema_version", 0) != kBaselineSchemaVersion) {
    throw std::runtime_error(fmt::format(
        "baseline {} has schema version {}, this harness reads version {}; write it again with "
        "`neuron-conform gate --write-baseline`",
        path, j.value("schema_version", nlohmann::json()).dump(), kBaselineSchemaVersion));
  }
  Snapshot s;
  s.name = path;
  try {
    s.suite = j.at("suite").get<std::string>();
    s.native_ops = j.at("native_ops").get<std::set<std::string>>();
    s.fallback_ops = j.at("fallback_ops").get<std::set<std::string>>();
    for (const auto& [id, outcome] : j.at("cases").items()) {
      CaseId::parse(id);
      try {
        s.cases[id] = {parse_outcome(outcome.get<std::string>()), ""};
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("case {}: {}", id, e.what()));
      }
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("baseline {} is malformed: {}", path, e.what()));
  }
  return s;
}

}  // namespace conform
