#include "Coverage.h"

#include "Subjects.h"
#include "common/CaseId.h"
#include "common/Result.h"
#include "common/SuiteDescription.h"
#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <set>
#include <sstream>

namespace conform {
namespace {

using nlohmann::json;

json zero_counts() {
  json counts = json::object();
  for (const auto& o : kOutcomes) counts[std::string(o.name)] = 0;
  return counts;
}

void count(json& counts, Outcome o) {
  const std::string key(name(o));
  counts[key] = counts.value(key, std::int64_t{0}) + 1;
}

// Seconds between two of Store::now_utc()'s timestamps, or null when either is missing.
json seconds_between(const std::string& from, const std::optional<std::string>& to) {
  if (!to) return nullptr;
  auto parse = [](const std::string& t) -> std::optional<double> {
    std::tm tm{};
    std::istringstream in(t);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
    if (in.fail()) return std::nullopt;
    double ms = 0;
    if (t.size() > 20 && t[19] == '.') ms = std::stod(t.substr(20, 3));
    return static_cast<double>(timegm(&tm)) + ms / 1000.0;
  };
  const auto a = parse(from), b = parse(*to);
  if (!a || !b) return nullptr;
  return *b - *a;
}

// Evidence as reports show it: everything but tracebacks, long messages cut.
json report_evidence(const json& evidence) {
  json out = json::object();
  for (const auto& [key, value] : evidence.items()) {
    if (key == "traceback") continue;
    if (value.is_string() && value.get_ref<const std::string&>().size() > 600) {
      out[key] = value.get<std::string>().substr(0, 600) + " [...]";
    } else {
      out[key] = value;
    }
  }
  return out;
}

}  // namespace

json build_coverage(Store& store, const std::string& run_id, const std::string& db_path) {
  const auto run = store.run(run_id);
  if (!run) throw StoreError(fmt::format("no run '{}' in {}", run_id, db_path));
  const std::int64_t planned = store.planned_count(run_id);
  const std::vector<CaseResult> results = store.results(run_id);

  json headline_counts = zero_counts();
  json categories = json::object();
  struct AtenOp {
    std::int64_t native_calls = 0, fallback_calls = 0;
    std::int64_t cases_native = 0, cases_fallback = 0, cases_failing = 0;
    std::set<std::string> subjects;
  };
  std::map<std::string, AtenOp> aten;
  std::int64_t cache_compiles = 0, cache_hits = 0;
  bool cache_reported = false;
  json cases = json::array();
  std::set<std::string> dtypes, checks;

  for (const CaseResult& r : results) {
    const CaseId id = CaseId::parse(r.case_id);
    dtypes.insert(id.dtype);
    checks.insert(id.check);
    count(headline_counts, r.outcome);
    if (r.evidence.contains("skiplist")) {
      json& counts = categories[r.evidence["skiplist"].value("category", "?")];
      if (counts.is_null()) counts = json::object();
      count(counts, r.outcome);
    }
    if (r.evidence.contains("compile_cache")) {
      cache_reported = true;
      cache_compiles += r.evidence["compile_cache"].value("compiles", std::int64_t{0});
      cache_hits += r.evidence["compile_cache"].value("hits", std::int64_t{0});
    }
    const bool failing = did_not_match(r.outcome);
    for (const auto& [op, calls] : r.native_ops) {
      AtenOp& a = aten[op];
      a.native_calls += calls, ++a.cases_native, a.subjects.insert(id.subject);
      a.cases_failing += failing;
    }
    for (const auto& [op, calls] : r.fallback_ops) {
      AtenOp& a = aten[op];
      a.fallback_calls += calls, ++a.cases_fallback, a.subjects.insert(id.subject);
      if (!r.native_ops.contains(op)) a.cases_failing += failing;
    }
    json c = {{"id", r.case_id},
              {"subject", id.subject},
              {"dtype", id.dtype},
              {"check", id.check},
              {"outcome", r.outcome},
              {"duration", r.duration},
              {"evidence", report_evidence(r.evidence)},
              {"fallback_ops", json::array()}};
    for (const auto& [op, _] : r.fallback_ops) c["fallback_ops"].push_back(op);
    if (r.outcome != Outcome::kPass && kind(r.outcome) != OutcomeKind::kNotRun) {
      c["repro"] = fmt::format("neuron-conform repro {} --db {} --run {}", shell_quote(r.case_id),
                               shell_quote(db_path), run_id);
    }
    cases.push_back(std::move(c));
  }

  // Declared native ops: what the backend says it implements, if it said (native_ops()).
  std::set<std::string> declared;
  const json declared_json = run->backend_info.value("native_ops", json());
  if (declared_json.is_array()) {
    for (const auto& op : declared_json) declared.insert(op.get<std::string>());
  }
  json aten_rows = json::array();
  std::int64_t exercised_declared = 0, fallback_ops = 0;
  for (const auto& [op, a] : aten) {
    const bool is_declared = declared.contains(op);
    exercised_declared += is_declared && a.cases_native > 0;
    fallback_ops += a.cases_fallback > 0;
    aten_rows.push_back({{"op", op},
                         {"declared_native", declared_json.is_array() ? json(is_declared) : json()},
                         {"native_calls", a.native_calls},
                         {"fallback_calls", a.fallback_calls},
                         {"cases_native", a.cases_native},
                         {"cases_fallback", a.cases_fallback},
                         {"cases_failing", a.cases_failing},
                         {"subjects", a.subjects}});
  }

  // What the suite declared when the run listed it; reports know no suite by name.
  const SuiteDescription suite = SuiteDescription::of_run(run->suite, run->suite_info, checks);
  json view = subject_view(cases, suite);

  json slowest = json::array();
  for (const auto& [id, seconds] : store.slowest(run_id, 20))
    slowest.push_back({{"id", id}, {"duration", seconds}});
  json worst = json::array();
  for (const auto& [id, evidence] : store.worst_failures(run_id, 20)) {
    worst.push_back({{"id", id},
                     {"max_abs_error", evidence.value("max_abs_error", json())},
                     {"max_rel_error", evidence.value("max_rel_error", json())}});
  }

  const std::int64_t recorded = static_cast<std::int64_t>(results.size());
  json headline = view["headline"];
  const auto cases_with = [&](Outcome o) {
    return headline_counts[std::string(name(o))].get<std::int64_t>();
  };
  std::string text = fmt::format(
      "{} of {} cases pass natively, {} match through the CPU fallback; {}",
      cases_with(Outcome::kPass), recorded, cases_with(Outcome::kFallback),
      headline["text"].get<std::string>());
  for (const auto& h : headline["headlines"]) text += "; " + h["text"].get<std::string>();
  if (declared_json.is_array() && !declared.empty()) {
    text += fmt::format("; {} of the backend's {} declared native aten ops were exercised",
                        exercised_declared, declared.size());
  }
  headline["subject_text"] = headline["text"];
  headline.update({
      {"planned", planned},
      {"recorded", recorded},
      {"outcomes", headline_counts},
      {"aten_ops_seen", aten.size()},
      {"aten_ops_with_fallback", fallback_ops},
      {"declared_native_ops", declared_json.is_array() ? json(declared.size()) : json()},
      {"declared_native_ops_exercised",
       declared_json.is_array() ? json(exercised_declared) : json()},
      {"compile_cache",
       cache_reported ? json{{"compiles", cache_compiles}, {"hits", cache_hits}} : json()},
      {"text", text}});

  json suite_json = suite.to_json();
  suite_json["name"] = run->suite;
  return {{"schema", "neuron-conform/coverage"},
          {"schema_version", kCoverageSchemaVersion},
          {"vocabulary", vocabulary_json()},
          {"run",
           {{"id", run->id},
            {"suite", run->suite},
            {"status", run->status},
            {"label", run->label ? json(*run->label) : json()},
            {"started_at", run->started_at},
            {"ended_at", run->ended_at ? json(*run->ended_at) : json()},
            {"duration_seconds", seconds_between(run->started_at, run->ended_at)},
            {"seed", run->seed},
            {"host", run->host},
            {"torch", run->torch_version},
            {"backend_module", run->backend_module},
            {"backend_version", run->backend_version},
            {"harness_version", run->harness_version},
            {"device", run->device},
            {"shard", run->shard ? json(*run->shard) : json()},
            {"command", run->command}}},
          {"suite", suite_json},
          {"headline", headline},
          {"dtypes", dtypes},
          {"checks", checks},
          {"skips_by_category", categories},
          {"subjects", std::move(view["subjects"])},
          {"op_impact", std::move(view["op_impact"])},
          {"aten", aten_rows},
          {"cases", cases},
          {"slowest", slowest},
          {"worst", worst}};
}

}  // namespace conform
