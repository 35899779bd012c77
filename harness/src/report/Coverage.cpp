#include "report/Coverage.h"

#include "common/CaseId.h"
#include "common/Ledger.h"
#include "common/Result.h"
#include "common/SuiteDescription.h"
#include "common/Text.h"
#include "expect/Dispositions.h"
#include "report/Subjects.h"

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

// What one pass over a run's results counts: outcomes, skip-list categories, aten ops, the
// compile cache, and each case as the reports show it.
class Tally {
 public:
  Tally(std::string run_id, std::string db_path)
      : run_id_(std::move(run_id)), db_path_(std::move(db_path)) {}

  void add(const CaseResult& r) {
    const CaseId id = CaseId::parse(r.case_id);
    dtypes.insert(id.dtype);
    checks.insert(id.check);
    count(outcomes, r.outcome);
    if (r.evidence.contains("skiplist")) {
      json& counts = categories[r.evidence["skiplist"].value("category", "?")];
      if (counts.is_null()) counts = json::object();
      count(counts, r.outcome);
    }
    case_seconds += r.duration;
    if (r.evidence.contains("compile_cache")) {
      const json& cache = r.evidence["compile_cache"];
      if (compile_cache.is_null())
        compile_cache = {{"compiles", 0}, {"hits", 0}, {"memory_hits", 0}, {"disk_hits", 0},
                         {"compile_seconds", 0.0}, {"cases_compiling", 0}};
      for (const char* key : {"compiles", "hits", "memory_hits", "disk_hits"})
        compile_cache[key] = compile_cache[key].get<std::int64_t>() + cache.value(key, std::int64_t{0});
      compile_cache["compile_seconds"] =
          compile_cache["compile_seconds"].get<double>() + cache.value("compile_seconds", 0.0);
      compile_cache["cases_compiling"] =
          compile_cache["cases_compiling"].get<std::int64_t>() + (cache.value("compiles", 0) > 0);
    }
    if (r.evidence.contains("compile_seconds") && r.evidence["compile_seconds"].is_number())
      compile_seconds = (compile_seconds.is_null() ? 0.0 : compile_seconds.get<double>()) +
                        r.evidence["compile_seconds"].get<double>();
    const bool failing = did_not_match(r.outcome);
    for (const auto& [op, calls] : r.native_ops) {
      AtenOp& a = aten_[op];
      a.native_calls += calls, ++a.cases_native, a.subjects.insert(id.subject);
      a.cases_failing += failing;
    }
    for (const auto& [op, calls] : r.host_only_ops) {
      AtenOp& a = aten_[op];
      a.host_only_calls += calls, ++a.cases_host_only, a.subjects.insert(id.subject);
      if (!r.native_ops.contains(op)) a.cases_failing += failing;
    }
    for (const auto& [op, calls] : r.fallback_ops) {
      AtenOp& a = aten_[op];
      a.fallback_calls += calls, ++a.cases_fallback, a.subjects.insert(id.subject);
      if (!r.native_ops.contains(op) && !r.host_only_ops.contains(op)) a.cases_failing += failing;
    }
    cases.push_back(case_json(r, id));
  }

  // One row per aten op; `declared` is the backend's native_ops(), null when it has none.
  json aten_rows(const json& declared) const {
    std::set<std::string> names;
    if (declared.is_array())
      for (const auto& op : declared) names.insert(op.get<std::string>());
    json rows = json::array();
    for (const auto& [op, a] : aten_) {
      rows.push_back({{"op", op},
                      {"declared_native", declared.is_array() ? json(names.contains(op)) : json()},
                      {"native_calls", a.native_calls},
                      {"host_only_calls", a.host_only_calls},
                      {"fallback_calls", a.fallback_calls},
                      {"cases_native", a.cases_native},
                      {"cases_host_only", a.cases_host_only},
                      {"cases_fallback", a.cases_fallback},
                      {"cases_failing", a.cases_failing},
                      {"subjects", a.subjects}});
    }
    return rows;
  }

  json outcomes = zero_counts();
  json categories = json::object();
  json compile_cache;              // null unless the backend reported compile_cache_stats()
  double case_seconds = 0;         // the cases' durations summed (compiling included)
  json compile_seconds = nullptr;  // torch.compile's time, summed over cases that record it
  json cases = json::array();
  std::set<std::string> dtypes, checks;

 private:
  struct AtenOp {
    std::int64_t native_calls = 0, host_only_calls = 0, fallback_calls = 0;
    std::int64_t cases_native = 0, cases_host_only = 0, cases_fallback = 0, cases_failing = 0;
    std::set<std::string> subjects;
  };

  json case_json(const CaseResult& r, const CaseId& id) const {
    json c = {{"id", r.case_id},
              {"subject", id.subject},
              {"dtype", id.dtype},
              {"check", id.check},
              {"outcome", r.outcome},
              {"duration", r.duration},
              {"evidence", report_evidence(r.evidence)},
              {"fallback_ops", json::array()},
              {"host_only_ops", json::array()}};
    for (const auto& [op, _] : r.fallback_ops) c["fallback_ops"].push_back(op);
    for (const auto& [op, _] : r.host_only_ops) c["host_only_ops"].push_back(op);
    if (r.outcome != Outcome::kPass && kind(r.outcome) != OutcomeKind::kNotRun) {
      c["repro"] = fmt::format("neuron-conform repro {} --db {} --run {}", shell_quote(r.case_id),
                               shell_quote(db_path_), run_id_);
    }
    return c;
  }

  std::string run_id_, db_path_;
  std::map<std::string, AtenOp> aten_;
};

// The subject view's headline, completed with the run's counts and the one-sentence text.
json headline_of(const Tally& tally, json headline, const json& aten_rows, const json& declared,
                 std::int64_t planned) {
  std::int64_t exercised = 0, with_fallback = 0;
  for (const auto& a : aten_rows) {
    exercised += a["declared_native"] == true && a["cases_native"].get<std::int64_t>() > 0;
    with_fallback += a["cases_fallback"].get<std::int64_t>() > 0;
  }
  const auto cases_with = [&](Outcome o) {
    return tally.outcomes[std::string(name(o))].get<std::int64_t>();
  };
  const auto recorded = static_cast<std::int64_t>(tally.cases.size());
  std::string text =
      fmt::format("{} of {} cases pass natively, {} match through the CPU fallback",
                  cases_with(Outcome::kPass), recorded, cases_with(Outcome::kFallback));
  if (const auto host_only = cases_with(Outcome::kHostOnly); host_only > 0)
    text += fmt::format(", {} match with a kernel of the backend that computed on the host "
                        "(host-only, not native)",
                        host_only);
  if (const auto unknown = cases_with(Outcome::kNativeUnknown); unknown > 0)
    text +=
        fmt::format(", {} match where the harness could not observe how their ops ran", unknown);
  if (const auto unverified = cases_with(Outcome::kUnverified); unverified > 0)
    text += fmt::format(", {} ran without error but could not have their values compared "
                        "(unverified, not a pass)",
                        unverified);
  text += "; " + headline["text"].get<std::string>();
  for (const auto& h : headline["headlines"]) text += "; " + h["text"].get<std::string>();
  if (declared.is_array() && !declared.empty()) {
    text += fmt::format("; {} of the backend's {} declared native aten ops were exercised",
                        exercised, declared.size());
  }
  headline["subject_text"] = headline["text"];
  headline.update(
      {{"planned", planned},
       {"recorded", recorded},
       {"outcomes", tally.outcomes},
       {"aten_ops_seen", aten_rows.size()},
       {"aten_ops_with_fallback", with_fallback},
       {"declared_native_ops", declared.is_array() ? json(declared.size()) : json()},
       {"declared_native_ops_exercised", declared.is_array() ? json(exercised) : json()},
       {"compile_cache", tally.compile_cache},
       {"compile_seconds", tally.compile_seconds},
       {"case_seconds", tally.case_seconds},
       {"text", text}});
  return headline;
}

// The run's aten-overload ledger (common/Ledger.h, docs/ledger.md), when the run stored the
// overloads with a CPU kernel (runs since the ledger); null otherwise. Dispositions are those the
// run stored (backend_info "dispositions"), so the report never changes with the file; a run
// recorded before runs stored them is counted with the file the backend ships now, and says so.
json ledger_of(Store& store, const RunInfo& run) {
  const json& info = run.backend_info;
  if (!info.contains("cpu_overloads") || !info["cpu_overloads"].is_array()) return json();
  const auto overloads = info["cpu_overloads"].get<std::vector<std::string>>();
  const auto composite = info.value("device_composite", std::vector<std::string>());
  DispositionsByOverload dispositions;
  std::size_t problems = 0;
  std::string source = "none: the backend ships no ledger/dispositions.json";
  if (info.contains("dispositions") && info["dispositions"].is_object()) {
    const json& stored = info["dispositions"];
    dispositions = dispositions_from_json(stored.value("overloads", json::object()));
    problems = stored.value("problems", std::size_t{0});
    source = "stored with the run";
  } else if (const auto path =
                 dispositions_in(info.value("skiplists", std::vector<std::string>()))) {
    // Names this run's torch lacks dispose of nothing here (`ledger --lint` reports them).
    const DispositionsFile now = load_dispositions(*path);
    dispositions = now.by_overload();
    problems = now.problems.size();
    source = "the backend's ledger/dispositions.json as it is now (the run stored none)";
  }
  const Ledger ledger = build_ledger(overloads, store.reached_ops({run.id}), dispositions,
                                     {composite.begin(), composite.end()});
  json out = ledger_json(ledger, 5);
  out["dispositions_problems"] = problems;
  out["dispositions"] = source;
  out["text"] = fmt::format("{} of {} applicable aten overloads reached ({:.1f}%), {} unreached",
                            ledger.reached(), ledger.applicable(), ledger.coverage_percent(),
                            ledger.unreached + ledger.unreached_known);
  return out;
}

}  // namespace

json build_coverage(Store& store, const std::string& run_id, const std::string& db_path) {
  const auto run = store.run(run_id);
  if (!run) throw StoreError(fmt::format("no run '{}' in {}", run_id, db_path));
  Tally tally(run_id, db_path);
  for (const CaseResult& r : store.results(run_id)) tally.add(r);

  // What the suite declared when the run listed it; reports know no suite by name.
  const SuiteDescription suite =
      SuiteDescription::of_run(run->suite, run->suite_info, tally.checks);
  json view = subject_view(tally.cases, suite);
  // Declared native ops: what the backend says it implements, if it said (native_ops()).
  const json declared = run->backend_info.value("native_ops", json());
  json aten_rows = tally.aten_rows(declared);

  json slowest = json::array();
  for (const auto& [id, seconds] : store.slowest(run_id, 20))
    slowest.push_back({{"id", id}, {"duration", seconds}});
  json worst = json::array();
  for (const auto& [id, evidence] : store.worst_failures(run_id, 20)) {
    worst.push_back({{"id", id},
                     {"max_abs_error", evidence.value("max_abs_error", json())},
                     {"max_rel_error", evidence.value("max_rel_error", json())}});
  }
  json suite_json = suite.to_json();
  suite_json["name"] = run->suite;
  json headline =
      headline_of(tally, view["headline"], aten_rows, declared, store.planned_count(run_id));
  json ledger = ledger_of(store, *run);
  if (!ledger.is_null())
    headline["text"] =
        headline["text"].get<std::string>() + "; ledger: " + ledger["text"].get<std::string>();
  return {{"schema", "neuron-conform/coverage"},
          {"schema_version", kCoverageSchemaVersion},
          {"vocabulary", vocabulary_json()},
          {"run", run_json(*run)},
          {"suite", suite_json},
          {"headline", std::move(headline)},
          {"dtypes", tally.dtypes},
          {"checks", tally.checks},
          {"skips_by_category", tally.categories},
          {"subjects", std::move(view["subjects"])},
          {"op_impact", std::move(view["op_impact"])},
          {"aten", std::move(aten_rows)},
          {"ledger", std::move(ledger)},
          {"cases", std::move(tally.cases)},
          {"slowest", slowest},
          {"worst", worst}};
}

}  // namespace conform
