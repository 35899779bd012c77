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
    const auto entry = r.evidence.find("skiplist");
    const bool flaky = entry != r.evidence.end() && entry->is_object() &&
                       entry->value("expects_flakiness", false);
    s.cases[r.case_id] = {r.outcome, first_line(r.evidence), flaky};
    for (const auto& [op, _] : r.native_ops) s.native_ops.insert(op);
    for (const auto& [op, _] : r.fallback_ops) s.fallback_ops.insert(op);
    for (const auto& [op, _] : r.host_only_ops) s.host_only_ops.insert(op);
  }
  return s;
}

nlohmann::json baseline_json(const std::vector<std::pair<Snapshot, RunInfo>>& runs) {
  nlohmann::json suites = nlohmann::json::object();
  for (const auto& [s, run] : runs) {
    nlohmann::json cases = nlohmann::json::object();
    for (const auto& [id, c] : s.cases) cases[id] = c.outcome;
    suites[s.suite] = {{"source_run", run.id},
                       {"torch", run.torch_version},
                       {"backend", run.backend_module + " " + run.backend_version},
                       {"native_ops", s.native_ops},
                       {"fallback_ops", s.fallback_ops},
                       {"host_only_ops", s.host_only_ops},
                       {"cases", cases}};
  }
  return {{"schema", "neuron-conform/baseline"},
          {"schema_version", kBaselineSchemaVersion},
          {"written_at", Store::now_utc()},
          {"suites", suites}};
}

namespace {

// One suite's section of a baseline file (version 1 files are one section, with "suite").
Snapshot baseline_section(const std::string& path, const std::string& suite,
                          const nlohmann::json& j) {
  Snapshot s;
  s.name = path;
  s.suite = suite;
  s.native_ops = j.at("native_ops").get<std::set<std::string>>();
  s.fallback_ops = j.at("fallback_ops").get<std::set<std::string>>();
  // Baselines written before host-only was seen have none.
  s.host_only_ops = j.value("host_only_ops", std::set<std::string>());
  for (const auto& [id, outcome] : j.at("cases").items()) {
    if (CaseId::parse(id).suite != suite)
      throw std::invalid_argument(fmt::format("case {} is not of suite '{}'", id, suite));
    try {
      s.cases[id] = {parse_outcome(outcome.get<std::string>()), ""};
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("case {}: {}", id, e.what()));
    }
  }
  return s;
}

}  // namespace

std::vector<Snapshot> load_baselines(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "baseline");
  if (!j.is_object() || j.value("schema", nlohmann::json()) != "neuron-conform/baseline") {
    throw std::runtime_error(fmt::format(
        "{} is not a neuron-conform baseline (no \"schema\": \"neuron-conform/baseline\")", path));
  }
  const nlohmann::json version = j.value("schema_version", nlohmann::json());
  if (version != 1 && version != kBaselineSchemaVersion) {
    throw std::runtime_error(fmt::format(
        "baseline {} has schema version {}, this harness reads versions 1 and {}; write it again "
        "with `neuron-conform gate --write-baseline`",
        path, version.dump(), kBaselineSchemaVersion));
  }
  std::vector<Snapshot> out;
  try {
    if (version == 1) {
      out.push_back(baseline_section(path, j.at("suite").get<std::string>(), j));
    } else {
      if (!j.at("suites").is_object() || j["suites"].empty())
        throw std::invalid_argument("\"suites\" must map each suite to its section");
      for (const auto& [suite, section] : j["suites"].items())
        out.push_back(baseline_section(path, suite, section));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("baseline {} is malformed: {}", path, e.what()));
  }
  return out;
}

}  // namespace conform
