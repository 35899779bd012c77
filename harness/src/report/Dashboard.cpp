#include "report/Dashboard.h"

#include "common/Environment.h"
#include "common/Files.h"
#include "common/Vocabulary.h"
#include "compare/Diff.h"
#include "record/ModelHistory.h"
#include "report/Formats.h"
#include "report/Reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

namespace conform {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One letter per status (common/Vocabulary.h), so a subject's history over a year is one short
// string; the page gets the same table to read it back.
char status_letter(const std::string& status) {
  const auto found = find_named(kSubjectStatuses, status);
  return found ? info_of(kSubjectStatuses, *found).letter : '?';
}

// Cases whose outcome changed between the newest runs of the newest run's backend version (a
// changed backend explains a change; the same backend changing its mind is flakiness), most
// changes first. Skipped results say nothing about stability and are left out.
json unstable_cases(Store& store, const std::vector<std::string>& ids, std::size_t window) {
  const RunInfo newest = *store.run(ids.back());
  std::vector<std::string> same;  // oldest first
  for (auto it = ids.rbegin(); it != ids.rend() && same.size() < window; ++it) {
    const RunInfo run = *store.run(*it);
    if (run.backend_module == newest.backend_module &&
        run.backend_version == newest.backend_version)
      same.insert(same.begin(), *it);
  }
  json rows = json::array();
  for (const auto& [id, outcomes] : store.outcomes_by_case(same)) {
    json history = json::array();
    std::size_t changes = 0;
    std::optional<Outcome> last;
    for (const auto& [run_id, outcome] : outcomes) {
      if (kind(outcome) == OutcomeKind::kNotRun) continue;
      history.push_back({{"run", run_id}, {"outcome", outcome}});
      changes += last && *last != outcome;
      last = outcome;
    }
    if (changes > 0) rows.push_back({{"id", id}, {"changes", changes}, {"history", history}});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return a["changes"].get<std::size_t>() > b["changes"].get<std::size_t>();
  });
  return {{"backend", newest.backend_module + " " + newest.backend_version},
          {"runs", same},
          {"cases", rows}};
}

// The newest run's headline: the share of the cases run that matched the CPU (natively or
// through the fallback), the share of those that matched natively, and the failures new since
// the suite's run before.
json headline_of(const json& newest, std::size_t new_failures) {
  std::int64_t ran = 0, matched = 0;
  for (const auto& [name, count] : newest["outcomes"].items()) {
    const auto outcome = find_named(kOutcomes, name);
    if (!outcome || kind(*outcome) == OutcomeKind::kNotRun) continue;
    ran += count.get<std::int64_t>();
    if (*outcome == Outcome::kPass || *outcome == Outcome::kFallback ||
        *outcome == Outcome::kHostOnly || *outcome == Outcome::kNativeUnknown)
      matched += count.get<std::int64_t>();
  }
  const std::int64_t native =
      newest["outcomes"].value(std::string(name(Outcome::kPass)), std::int64_t{0});
  const auto share = [](std::int64_t part, std::int64_t whole) {
    return whole > 0 ? json(100.0 * static_cast<double>(part) / static_cast<double>(whole))
                     : json();
  };
  return {{"run", newest["run"]["id"]},       {"started_at", newest["run"]["started_at"]},
          {"label", newest["run"]["label"]},  {"status", newest["run"]["status"]},
          {"report", newest["report"]},       {"cases_run", ran},
          {"pass_rate", share(matched, ran)}, {"native_share", share(native, matched)},
          {"new_failures", new_failures}};
}

// One suite's section: its runs' digests (oldest first), each subject's status per run and the
// run it last changed in, the newest run's regressions against the one before, the unstable
// cases, and the headline.
json suite_section(Store& store, const std::string& db_path, const std::string& suite,
                   const fs::path& out) {
  const std::vector<std::string> ids = store.run_ids(suite);
  json runs = json::array();
  std::map<std::string, std::string> history;  // subject -> one letter per run ('-': not run)
  for (std::size_t i = 0; i < ids.size(); ++i) {
    json digest = run_digest(store, ids[i], db_path);
    const fs::path report = fs::path(run_dir(db_path, ids[i])) / "index.html";
    digest["report"] = fs::exists(report) ? json(fs::relative(report, out).string()) : json();
    for (auto& [subject, status] : digest["subjects"].items()) {
      std::string& h = history[subject];
      h.resize(i, info_of(kSubjectStatuses, SubjectStatus::kNotRun).letter);
      h.push_back(status_letter(status.get<std::string>()));
    }
    digest.erase("subjects");
    runs.push_back(std::move(digest));
  }
  json subjects = json::array();
  for (auto& [subject, h] : history) {
    h.resize(ids.size(), info_of(kSubjectStatuses, SubjectStatus::kNotRun).letter);
    std::size_t changed = 0;  // the first run of the current status
    for (std::size_t i = 1; i < h.size(); ++i)
      if (h[i] != h[i - 1]) changed = i;
    subjects.push_back({{"name", subject},
                        {"history", h},
                        {"last_changed", changed == 0 ? json() : json(ids[changed])}});
  }
  json regressions = json::array();
  if (ids.size() >= 2) {
    const Diff d = diff_snapshots(snapshot_of_run(store, ids[ids.size() - 2]),
                                  snapshot_of_run(store, ids.back()));
    for (const auto& c : d.new_failures)
      regressions.push_back(
          {{"id", c.id}, {"before", c.before}, {"after", c.after}, {"message", c.after_message}});
  }
  json headline = headline_of(runs.back(), regressions.size());
  return {{"suite", suite},
          {"noun", runs.back()["run"].value("noun", "subject")},
          {"headline", std::move(headline)},
          {"runs", std::move(runs)},
          {"subjects", std::move(subjects)},
          {"regressions", std::move(regressions)},
          {"unstable", unstable_cases(store, ids, 10)}};
}

}  // namespace

json build_dashboard(Store& store, const std::string& db_path,
                     const std::optional<std::string>& suite, const std::string& out_dir) {
  std::vector<std::string> suites;
  if (suite) {
    if (store.run_ids(*suite).empty())
      throw StoreError(fmt::format("{} has no run of suite '{}'", db_path, *suite));
    suites.push_back(*suite);
  } else {
    // newest_run_of_each_suite() is ordered by suite name.
    for (const auto& id : store.newest_run_of_each_suite()) suites.push_back(store.run(id)->suite);
    if (suites.empty()) throw StoreError(fmt::format("{} has no run", db_path));
  }
  const fs::path out = fs::absolute(out_dir);
  json sections = json::array();
  for (const auto& name : suites) sections.push_back(suite_section(store, db_path, name, out));
  json letters = json::object();
  for (const auto& s : kSubjectStatuses) letters[std::string(1, s.letter)] = s.name;
  // The newest recorded check-model verdict of each model (check-model --record); the records
  // come by model, oldest first.
  json models = json::array();
  const auto checks = model_checks(store);
  std::size_t recorded = 0;  // the current model's checks so far
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const ModelCheckRecord& c = checks[i];
    ++recorded;
    if (i + 1 < checks.size() && checks[i + 1].model_key == c.model_key) continue;
    models.push_back(
        {{"model", c.model_key},
         {"recorded_at", c.recorded_at},
         {"checks", std::exchange(recorded, 0)},
         {"exit_code", c.exit_code},
         {"verdict", c.verdict},
         {"versions", fmt::format("torch {} · {} {} · harness {}", c.torch_version,
                                  c.backend_module, c.backend_version, c.harness_version)},
         {"evidence_run", c.evidence_run}});
  }
  return {{"schema", "neuron-conform/dashboard"},
          {"schema_version", 3},
          {"models", models},
          {"generated_at", Store::now_utc()},
          {"db", db_path},
          {"api_compat", api_compat_link(db_path, out_dir)},
          {"status_letters", letters},
          {"vocabulary", vocabulary_json()},
          {"suites", std::move(sections)}};
}

void write_dashboard(const json& model, const std::string& out_dir) {
  fs::create_directories(out_dir);
  const std::string html = fill_template(page_template("dashboard.html"), model);
  write_file(fs::path(out_dir) / "dashboard.json", model.dump(1) + "\n");
  write_file(fs::path(out_dir) / "index.html", html);
}

}  // namespace conform
