// `neuron-conform run`: plan (list the suite, select, shard), schedule the cases on workers,
// record every result, summarise.
#include "Coverage.h"
#include "Reports.h"
#include "commands/Commands.h"
#include "commands/Environment.h"
#include "expect/Skiplist.h"
#include "plan/Listing.h"
#include "plan/Planner.h"
#include "plan/Shard.h"
#include "record/Store.h"
#include "report/Progress.h"
#include "report/Summary.h"
#include "schedule/Scheduler.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace conform {

namespace {

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// Longest (by recorded duration) first, so the slow cases do not finish the run alone.
void order_for_scheduling(std::vector<std::string>& cases,
                          const std::map<std::string, double>& durations) {
  std::stable_sort(cases.begin(), cases.end(), [&](const std::string& a, const std::string& b) {
    auto da = durations.find(a), db = durations.find(b);
    const double ta = da == durations.end() ? 0.0 : da->second;
    const double tb = db == durations.end() ? 0.0 : db->second;
    return ta > tb;
  });
}

}  // namespace

int run_command(const RunOptions& o) {
  if (o.jobs < 0)
    throw std::invalid_argument(
        fmt::format("-j {} is not a number of workers (use 1 or more)", o.jobs));
  if (o.timeout_seconds <= 0)
    throw std::invalid_argument(fmt::format("--timeout {} must be positive", o.timeout_seconds));
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::optional<ShardSpec> shard =
      o.shard ? std::optional(ShardSpec::parse(*o.shard)) : std::nullopt;

  ensure_parent_dir(o.db);
  Store store(o.db);

  // Recorded durations (one scan of the results) balance shards and order the queue.
  const std::map<std::string, double> durations = store.last_durations();
  RunInfo run;
  std::vector<std::string> cases;
  if (o.resume) {
    run = *store.run(store.resolve_run(*o.resume));
    cases = store.unrecorded(run.id);
    fmt::print(stderr, "resuming run {}: {} of {} planned cases not recorded yet\n", run.id,
               cases.size(), store.planned(run.id).size());
  } else {
    // The id first: the listing worker's log goes with the run, not into a folder that
    // concurrent runs on the same DB would share.
    run.id = Store::new_run_id();
    const std::string logs = run_dir(o.db, run.id) + "/logs";
    std::filesystem::create_directories(logs);
    fmt::print(stderr, "listing suite '{}' with backend '{}' ...\n", o.suite, o.backend_module);
    const Listing listing = list_suite(worker_command(o.suite, o.backend_module, o.device, o.seed),
                                       logs + "/list-worker.log");
    Selection selection{
        o.ops_regex, {o.dtypes.begin(), o.dtypes.end()}, {o.checks.begin(), o.checks.end()}};
    std::vector<CaseId> selected = select_cases(listing.cases, selection);
    std::vector<std::string> ids;
    for (const auto& c : selected) ids.push_back(c.str());
    if (shard) {
      ids = shard_cases(ids, *shard, durations);
      std::vector<CaseId> kept;
      for (const auto& id : ids) kept.push_back(CaseId::parse(id));
      selected = std::move(kept);
    }
    run.suite = o.suite;
    run.started_at = Store::now_utc();
    run.label = o.label;
    run.seed = o.seed;
    run.host = hostname();
    run.torch_version = listing.hello.value("torch", "unknown");
    run.backend_module = o.backend_module;
    run.backend_version = listing.hello.value("backend_version", "unknown");
    run.harness_version = harness_version();
    run.device = o.device;
    run.shard = shard ? std::optional(shard->str()) : std::nullopt;
    run.command = o.command_line;
    run.backend_info = {{"native_ops", listing.hello.value("native_ops", nlohmann::json())},
                        {"tracking", listing.hello.value("tracking", false)}};
    store.create_run(run);
    store.record_plan(run.id, selected);
    cases = std::move(ids);
    fmt::print(stderr, "run {}: {} cases{} on {} worker(s), results in {}\n", run.id, cases.size(),
               shard ? " (shard " + shard->str() + ")" : "",
               std::min<std::size_t>(jobs, cases.size()), o.db);
  }

  // Expectations: resolve every case before scheduling; skipped cases are recorded, never run.
  std::vector<std::string> paths = o.skiplists;
  if (paths.empty()) paths.push_back(source_dir() + "/skiplists");
  const Skiplists lists = o.no_skiplists ? Skiplists{} : load_skiplists(paths, run.torch_version);
  if (!lists.problems.empty()) {
    std::string all;
    for (const auto& p : lists.problems) all += "\n  " + p.str();
    throw std::invalid_argument(fmt::format("{} problem(s) in the skip lists; nothing was run:{}",
                                            lists.problems.size(), all));
  }
  const Expectations expectations(lists.entries);
  std::map<std::string, const Entry*> expected;
  std::vector<std::string> to_run;
  std::vector<CaseResult> skipped;
  for (const auto& id : cases) {
    const Entry* entry = expectations.decide(CaseId::parse(id));
    if (entry && entry->mode == "skip") {
      skipped.push_back(skipped_result(*entry, id));
    } else {
      if (entry) expected[id] = entry;
      to_run.push_back(id);
    }
  }
  store.record_results(run.id, skipped);
  if (!o.no_skiplists) {
    fmt::print(stderr, "skip lists: {} active entries; {} case(s) skipped, {} expected to fail\n",
               lists.entries.size(), skipped.size(), expected.size());
  }
  cases = std::move(to_run);
  order_for_scheduling(cases, durations);
  const std::string logs = run_dir(o.db, run.id) + "/logs";
  std::filesystem::create_directories(logs);
  ScheduleOptions schedule;
  schedule.jobs = jobs;
  schedule.case_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_seconds * 1000));
  schedule.worker = worker_command(run.suite, run.backend_module, run.device, run.seed);
  schedule.log_dir = logs;

  Progress progress(cases.size(), isatty(STDERR_FILENO) != 0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> news;  // xpass and unexpected failures: what --strict refuses
  Scheduler scheduler(schedule, [&](const CaseResult& observed) {
    CaseResult result = observed;
    if (auto it = expected.find(observed.case_id); it != expected.end()) {
      result = apply_expectation(*it->second, observed);
      if (result.outcome == "xpass" || is_expectation_mismatch(result)) {
        news.push_back(fmt::format("{} {} (entry {})", result.case_id,
                                   result.outcome == "xpass"
                                       ? "passed unexpectedly"
                                       : "failed differently: " + result.outcome,
                                   it->second->where.str()));
      }
    }
    store.record_result(run.id, result);
    progress.add(result);
  });
  ScheduleStats stats;
  try {
    stats = scheduler.run(cases);
  } catch (...) {
    store.finish_run(run.id, "interrupted");  // what was recorded stays; --resume finishes it
    throw;
  }
  progress.finish();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  store.finish_run(run.id, store.unrecorded(run.id).empty() ? "complete" : "interrupted");

  // One coverage model for the summary and every report file.
  const nlohmann::json coverage = build_coverage(store, run.id, o.db);
  fmt::print(
      "{}",
      run_summary(coverage, o.db, wall,
                  std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(1, cases.size())))));
  if (stats.workers_started > 0) {
    fmt::print("  workers: {} started (mean start-up {:.2f}s), {} crash(es), {} timeout(s)\n",
               stats.workers_started, stats.startup_seconds_total / stats.workers_started,
               stats.crashes, stats.timeouts);
  }
  // The results are committed already: a report that cannot be written loses nothing.
  const std::string report_dir = run_dir(o.db, run.id);
  try {
    write_reports(store, coverage, report_dir);
    point_latest(o.db, run.id);
    fmt::print("  report: {}/index.html (summary.md, coverage.json, junit.xml, ops.csv)\n",
               report_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "neuron-conform: the report of run {} could not be written: {}\n", run.id,
               e.what());
    return 1;
  }
  if (!news.empty()) {
    fmt::print("  skip lists out of date ({}):\n", news.size());
    for (const auto& line : news) fmt::print("    {}\n", line);
    if (o.strict) {
      fmt::print(stderr, "neuron-conform: --strict: {} case(s) disagree with the skip lists\n",
                 news.size());
      return 1;
    }
  }
  return 0;
}

}  // namespace conform
