// `neuron-conform run`, in its stages: plan (list the suite, select, shard, or resume a run),
// expect (skip lists decide what is skipped or expected to fail), execute (workers run the
// rest, every result recorded as it arrives), conclude (summary, reports, --strict).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/SuiteDescription.h"
#include "common/Text.h"
#include "expect/Dispositions.h"
#include "expect/Skiplist.h"
#include "plan/Listing.h"
#include "plan/Planner.h"
#include "plan/Shard.h"
#include "record/Store.h"
#include "report/Coverage.h"
#include "report/Reports.h"
#include "report/Summary.h"
#include "schedule/Progress.h"
#include "schedule/Scheduler.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace conform {

namespace {

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// The run's worker logs, next to its reports.
std::string log_dir(const std::string& db, const std::string& run_id) {
  const std::string logs = run_dir(db, run_id) + "/logs";
  std::filesystem::create_directories(logs);
  return logs;
}

struct Plan {
  RunInfo run;
  std::vector<std::string> cases;  // not recorded yet
  // A new run's zygote, which lists the suite (a forked worker: one Python start-up a run, not
  // two), with the workers' command less any environment execute() adds; and its environment.
  std::unique_ptr<Zygote> zygote;
  std::vector<std::pair<std::string, std::string>> zygote_env;
};

// A new run: the suite listed by a worker, selected, sharded, recorded with its plan.
Plan plan_new_run(Store& store, const RunOptions& o, const std::map<std::string, double>& durations,
                  int jobs, std::int64_t memory) {
  const std::optional<ShardSpec> shard =
      o.shard ? std::optional(ShardSpec::parse(*o.shard)) : std::nullopt;
  Plan plan;
  RunInfo& run = plan.run;
  // The id first: the listing worker's log goes with the run, not into a folder that
  // concurrent runs on the same DB would share.
  run.id = Store::new_run_id();
  fmt::print(stderr, "listing suite '{}' with backend '{}' ...\n",
             o.suite.empty() ? "(the default)" : o.suite, o.backend_module);
  // The suite options as given: the zygote types and resolves them as the listing worker does.
  WorkerCommand command =
      worker_command(o.suite, o.backend_module, o.device, o.seed, o.suite_options);
  command.max_memory_bytes = memory;
  plan.zygote_env = command.env;
  plan.zygote = std::make_unique<Zygote>(command, log_dir(o.db, run.id) + "/zygote.log",
                                         ScheduleOptions{}.startup_timeout);
  // The skip lists the backend ships, found while the zygote imports (a Python start of its own).
  auto shipped = std::async(std::launch::async, backend_skiplists, o.backend_module);
  // The reason the zygote cannot start (an unimportable backend, bad options) stops the run.
  plan.zygote->ready();
  const Listing listing = [&] {
    Worker lister(*plan.zygote, log_dir(o.db, run.id) + "/list-worker.log", "list");
    return list_suite(o.suite, lister);
  }();
  const Selection selection{
      o.ops_regex, {o.dtypes.begin(), o.dtypes.end()}, {o.checks.begin(), o.checks.end()}};
  std::vector<CaseId> selected = select_cases(listing.cases, selection);
  for (const auto& c : selected) plan.cases.push_back(c.str());
  if (shard) {
    plan.cases = shard_cases(plan.cases, *shard, durations);
    selected.clear();
    for (const auto& id : plan.cases) selected.push_back(CaseId::parse(id));
  }
  run.suite = listing.suite;
  run.started_at = Store::now_utc();
  run.label = o.label;
  run.seed = o.seed;
  run.host = hostname();
  run.torch_version = listing.hello.value("torch", "unknown");
  run.backend_module = o.backend_module;
  run.backend_version = listing.hello.value("backend_version", "unknown");
  run.harness_version = harness_version();
  run.device = o.device.empty() ? listing.hello.value("device", std::string("unknown")) : o.device;
  run.shard = shard ? std::optional(shard->str()) : std::nullopt;
  run.command = o.command_line;
  run.backend_info = {{"native_ops", listing.hello.value("native_ops", nlohmann::json())},
                      {"tracking", listing.hello.value("tracking", false)},
                      {"op_sources", listing.hello.value("op_sources", nlohmann::json::array())},
                      {"device_memory", listing.hello.value("device_memory", false)},
                      {"capture", listing.hello.value("capture", "")},
                      {"launch_blocking", listing.hello.value("launch_blocking", false)},
                      {"blocking", o.blocking}};
  if (o.blocking && !run.backend_info["launch_blocking"].get<bool>())
    throw std::invalid_argument(fmt::format(
        "--blocking: the backend {} declares no launch-blocking switch (set_launch_blocking(); "
        "docs/backends.md)",
        o.backend_module));
  // The skip lists the backend ships (whether or not this run applies them): the default lists,
  // and where the ledger's dispositions are.
  const std::vector<std::string> shipped_lists = shipped.get();
  run.backend_info["skiplists"] = shipped_lists;
  // The dispositions the run's ledger counts with, kept with the run: its report never changes
  // with the file (entries with a problem dispose of nothing; `ledger --lint` names them).
  if (const auto path = dispositions_in(shipped_lists)) {
    const DispositionsFile d = load_dispositions(*path);
    run.backend_info["dispositions"] = {{"file", *path},
                                        {"problems", d.problems.size()},
                                        {"overloads", dispositions_json(d.by_overload())}};
  }
  // The rows of the ledger (common/Ledger.h), so a report of the run can count them.
  for (const char* key : {"cpu_overloads", "device_composite"})
    if (listing.hello.contains(key)) run.backend_info[key] = listing.hello[key];
  run.suite_info = listing.description_json;
  run.suite_options = listing.options;
  store.create_run(run);
  store.record_plan(run.id, selected);
  fmt::print(stderr, "run {}: {} cases{} on {} worker(s), results in {}\n", run.id,
             plan.cases.size(), shard ? " (shard " + shard->str() + ")" : "",
             std::min<std::size_t>(jobs, plan.cases.size()), o.db);
  return plan;
}

Plan plan_resumed_run(Store& store, const std::string& reference) {
  Plan plan;
  plan.run = *store.run(store.resolve_run(reference));
  plan.cases = store.unrecorded(plan.run.id);
  fmt::print(stderr, "resuming run {}: {} of {} planned cases not recorded yet\n", plan.run.id,
             plan.cases.size(), store.planned_count(plan.run.id));
  return plan;
}

struct Expected {
  // Owns the entries `by_case` points into (a moved vector keeps its elements in place).
  Expectations expectations{{}};
  std::map<std::string, const Entry*> by_case;
  std::vector<std::string> to_run;
};

// Every case resolved against the skip lists before anything runs; skipped cases are recorded
// and never run. Malformed skip lists stop the run before any case. The suite's own list (what
// no device can run) comes first and always applies; the backend's unless --no-skiplists.
Expected expect(Store& store, const RunOptions& o, const Plan& plan) {
  std::vector<std::string> paths;
  const std::string suite_list =
      SuiteDescription::of_run(plan.run.suite, plan.run.suite_info, {}).own_skiplist;
  if (!suite_list.empty()) paths.push_back(suite_list);
  if (!o.no_skiplists) {
    const std::vector<std::string> backend =
        skiplist_paths(o.skiplists, plan.run.backend_info, plan.run.backend_module);
    if (backend.empty())
      fmt::print(stderr,
                 "skip lists: backend '{}' ships none (entry-point group neuron_conform.skiplists) "
                 "and none were given (--skiplists)\n",
                 plan.run.backend_module);
    paths.insert(paths.end(), backend.begin(), backend.end());
  }
  const Skiplists lists = load_skiplists(paths, plan.run.torch_version);
  if (!lists.problems.empty()) {
    std::string all;
    for (const auto& p : lists.problems) all += "\n  " + p.str();
    throw std::invalid_argument(fmt::format("{} problem(s) in the skip lists; nothing was run:{}",
                                            lists.problems.size(), all));
  }
  Expected out{Expectations(lists.entries), {}, {}};
  std::vector<CaseResult> skipped;
  for (const auto& id : plan.cases) {
    const Entry* entry = out.expectations.decide(CaseId::parse(id));
    if (entry && entry->mode == Mode::kSkip) {
      skipped.push_back(skipped_result(*entry, id));
      continue;
    }
    if (entry) out.by_case[id] = entry;
    out.to_run.push_back(id);
  }
  store.record_results(plan.run.id, skipped);
  if (!paths.empty()) {
    std::size_t tolerated = 0;
    for (const auto& id : out.to_run)
      tolerated += out.expectations.tolerance(CaseId::parse(id)) != nullptr;
    fmt::print(stderr,
               "skip lists: {} active entries; {} case(s) skipped, {} expected to fail, {} "
               "compared with a reviewed tolerance\n",
               lists.entries.size(), skipped.size(), out.by_case.size(), tolerated);
  }
  return out;
}

struct Execution {
  ScheduleStats stats;
  double wall_seconds = 0;
  int workers = 1;
  std::int64_t worker_memory = 0;     // each worker's limit; 0: none
  std::vector<std::string> news;      // xpass and failures unlike their entry's expectation
  std::vector<std::string> unlisted;  // failures and flaky cases no entry expects
};

// Longest (by recorded duration) first, so the slow cases do not finish the run alone; the cases
// sharing executables (CaseId::sharing_key) together, as one unit of their summed duration, which
// the scheduler hands to one worker: the first compiles what the others then find in memory.
void order_for_scheduling(std::vector<std::string>& cases,
                          const std::map<std::string, double>& durations) {
  const auto duration = [&](std::size_t i) {
    auto it = durations.find(cases[i]);
    return it == durations.end() ? 0.0 : it->second;
  };
  std::vector<std::vector<std::size_t>> groups = sharing_groups(cases);
  std::vector<double> seconds;
  for (auto& group : groups) {
    std::stable_sort(group.begin(), group.end(),
                     [&](std::size_t a, std::size_t b) { return duration(a) > duration(b); });
    seconds.push_back(0.0);
    for (std::size_t i : group) seconds.back() += duration(i);
  }
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);  // ties keep the listing's order
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  std::vector<std::string> ordered;
  for (std::size_t g : order)
    for (std::size_t i : groups[g]) ordered.push_back(cases[i]);
  cases = std::move(ordered);
}

// Each worker's memory limit: --max-worker-memory (0: none), else the machine's share per job.
std::int64_t worker_memory(const RunOptions& o, int jobs) {
  return o.max_worker_memory.value_or(default_worker_memory(jobs));
}

Execution execute(Store& store, const RunOptions& o, Plan& plan, Expected& expected,
                  const std::map<std::string, double>& durations, int jobs, std::int64_t memory) {
  const RunInfo& run = plan.run;
  std::vector<std::string>& cases = expected.to_run;
  order_for_scheduling(cases, durations);
  ScheduleOptions schedule;
  schedule.jobs = jobs;
  schedule.case_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_seconds * 1000));
  schedule.compile_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.compile_timeout_seconds * 1000));
  schedule.worker =
      worker_command(run.suite, run.backend_module, run.device, run.seed, run.suite_options);
  // A suite that asks for it (SuiteDescription::share_cores) has each worker's intra-op thread
  // pool get its share of the cores; a thread count the user set is kept.
  if (SuiteDescription::of_run(run.suite, run.suite_info, {}).share_cores &&
      std::getenv("OMP_NUM_THREADS") == nullptr) {
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    schedule.worker.env.emplace_back(
        "OMP_NUM_THREADS", std::to_string(std::max(1U, cores / static_cast<unsigned>(jobs))));
  }
  schedule.worker.max_memory_bytes = memory;
  schedule.log_dir = log_dir(o.db, run.id);
  // Under --blocking every op runs at its call; a late error's candidates rerun so wherever the
  // backend has the switch (docs/backends.md).
  schedule.blocking = run.backend_info.value("blocking", false);
  schedule.attribute_blocking = run.backend_info.value("launch_blocking", false);
  schedule.repeat = o.repeat;
  schedule.group_of = [](const std::string& id) { return CaseId::parse(id).sharing_key(); };
  // A reviewed tolerance travels with its case: the worker compares with it, and says so.
  schedule.case_request = [&expected](const std::string& id) {
    const Entry* tolerance = expected.expectations.tolerance(CaseId::parse(id));
    return tolerance ? nlohmann::json{{"tolerance", tolerance_request(*tolerance)}}
                     : nlohmann::json::object();
  };
  schedule.reruns = o.reruns;
  // A failure a skip list expects is no news: rerunning it costs fresh workers and proves
  // nothing, unless the entry says the case is flaky.
  schedule.may_rerun = [&expected](const std::string& id) {
    const auto it = expected.by_case.find(id);
    return it == expected.by_case.end() || it->second->expects_flaky();
  };

  Execution out;
  out.workers = std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(1, cases.size())));
  out.worker_memory = memory;
  Progress progress(cases, durations, isatty(STDERR_FILENO) != 0);
  const auto start = std::chrono::steady_clock::now();
  Scheduler scheduler(schedule, [&](const CaseResult& observed, bool amends) {
    CaseResult result = observed;
    if (auto it = expected.by_case.find(observed.case_id); it != expected.by_case.end()) {
      result = apply_expectation(*it->second, observed);
      if (result.outcome == Outcome::kXpass || is_expectation_mismatch(result)) {
        out.news.push_back(
            fmt::format("{} {} (entry {})", result.case_id,
                        result.outcome == Outcome::kXpass
                            ? std::string("passed unexpectedly")
                            : fmt::format("failed differently ({}): {}", name(result.outcome),
                                          result.evidence.value("observed_outcome", "")),
                        it->second->where.str()));
      }
    } else if (is_failure(result.outcome) || result.outcome == Outcome::kFlaky) {
      out.unlisted.push_back(fmt::format("{} {}: {}", result.case_id, name(result.outcome),
                                         one_line(case_message(result.evidence), 120)));
    }
    if (amends) {  // a late error found to be this case's: its result learnt more
      store.amend_result(run.id, result);
      return;
    }
    store.record_result(run.id, result);
    progress.add(result);
  });
  // The zygote started during the listing serves unless the workers need an environment it was
  // not started with (a suite that shares the cores gives them a thread count): then a new one
  // starts.
  if (plan.zygote && schedule.worker.env == plan.zygote_env) {
    scheduler.adopt(std::move(plan.zygote));
  }
  plan.zygote.reset();
  try {
    out.stats = scheduler.run(cases);
  } catch (const std::exception& e) {
    // What was committed stays (each result is its own transaction); say so, and how to go on.
    // Marking the run may fail for the same reason (a full disk): --resume does not need it.
    std::string recorded = "every result recorded before it is";
    try {
      store.finish_run(run.id);
      recorded =
          fmt::format("the {} result(s) recorded before it are", store.recorded_count(run.id));
    } catch (const std::exception&) {
    }
    throw std::runtime_error(fmt::format(
        "the run stopped: {}\n  {} kept in {}; once the cause is fixed, finish the run with:\n"
        "  neuron-conform run --resume {} --db {}",
        e.what(), recorded, o.db, run.id, shell_quote(o.db)));
  }
  progress.finish();
  out.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  store.finish_run(run.id);
  return out;
}

int conclude(Store& store, const RunOptions& o, const RunInfo& run, const Execution& done) {
  // One coverage model for the summary and every report file.
  const nlohmann::json coverage = build_coverage(store, run.id, o.db);
  fmt::print("{}", run_summary(coverage, o.db, done.wall_seconds, done.workers));
  if (done.stats.workers_started > 0) {
    fmt::print(
        "  workers: {} started (zygote start-up {:.2f}s once, then {:.2f}s mean per worker), {} "
        "crash(es), {} timeout(s), {} rerun(s), {} flaky; memory limit {}{}\n",
        done.stats.workers_started, done.stats.zygote_startup_seconds,
        done.stats.startup_seconds_total / done.stats.workers_started, done.stats.crashes,
        done.stats.timeouts, done.stats.reruns, done.stats.flaky,
        done.worker_memory > 0 ? describe_bytes(done.worker_memory) + " each" : "none",
        done.stats.retired > 0 ? fmt::format(", {} retired after a case", done.stats.retired) : "");
  }
  if (done.stats.late_errors > 0) {
    fmt::print(
        "  late errors: {} raised outside the case that queued the work, {} found by rerunning "
        "the cases before them alone (evidence: surfaced_at, late_error)\n",
        done.stats.late_errors, done.stats.late_attributed);
  }
  // The results are committed already: a report that cannot be written loses nothing.
  const std::string report_dir = run_dir(o.db, run.id);
  try {
    write_reports(store, coverage, o.db, report_dir);
    point_latest(o.db, run.id);
    fmt::print("  report: {}/index.html (summary.md, coverage.json, junit.xml, ops.csv)\n",
               report_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "neuron-conform: the report of run {} could not be written: {}\n", run.id,
               e.what());
    return 1;
  }
  if (!done.news.empty()) {
    fmt::print("  skip lists out of date ({}):\n", done.news.size());
    for (const auto& line : done.news) fmt::print("    {}\n", line);
  }
  if (o.strict && !done.unlisted.empty()) {  // without --strict the summary's worst list says it
    constexpr std::size_t kShown = 20;
    fmt::print("  failures no skip-list entry expects ({}):\n", done.unlisted.size());
    for (std::size_t i = 0; i < std::min(kShown, done.unlisted.size()); ++i)
      fmt::print("    {}\n", done.unlisted[i]);
    if (done.unlisted.size() > kShown)
      fmt::print("    ... and {} more (the report lists them all)\n",
                 done.unlisted.size() - kShown);
  }
  if (!o.strict || (done.news.empty() && done.unlisted.empty())) return 0;
  fmt::print(stderr,
             "neuron-conform: --strict: {} case(s) disagree with the skip lists, {} failure(s) "
             "no entry expects\n",
             done.news.size(), done.unlisted.size());
  return 1;
}

// run --warm: the selected cases run once for what they compile, in parallel across the workers,
// so that the backend's persistent cache holds every executable they need and the run after it
// compiles nothing. Their results go to a scratch database, deleted after: a warm pass is no run
// of the history. The history's durations still order and shard it, as the run after it will be.
int warm(const RunOptions& o, int jobs, std::int64_t memory) {
  if (o.resume) throw std::invalid_argument("--warm and --resume: a warm pass is never resumed");
  std::map<std::string, double> durations;
  if (std::filesystem::exists(o.db)) durations = Store(o.db, /*create=*/false).last_durations();
  // The scratch folder goes however the pass ends.
  struct Scratch {
    std::filesystem::path path;
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } scratch{std::filesystem::temp_directory_path() /
            fmt::format("neuron-conform-warm-{}", ::getpid())};
  std::filesystem::create_directories(scratch.path);
  RunOptions w = o;
  w.db = (scratch.path / "warm.db").string();
  w.reruns = 0;  // a failure compiled what it needed already
  Store store(w.db);
  Plan plan = plan_new_run(store, w, durations, jobs, memory);
  Expected expected = expect(store, w, plan);
  const Execution done = execute(store, w, plan, expected, durations, jobs, memory);
  const std::string compiling = compile_line(build_coverage(store, plan.run.id, w.db)["headline"]);
  fmt::print(
      "warm: {} case(s) run on {} worker(s) in {}, for what they compile (results not kept)\n",
      expected.to_run.size(), done.workers, format_duration(done.wall_seconds));
  fmt::print("  {}\n", compiling.empty() ? "the backend declares no compile-cache counters "
                                           "(compile_cache_stats(); docs/backends.md): what it "
                                           "compiled is not known"
                                         : compiling);
  return 0;
}

}  // namespace

int run_command(const RunOptions& o) {
  if (o.jobs < 0)
    throw std::invalid_argument(
        fmt::format("-j {} is not a number of workers (use 1 or more)", o.jobs));
  // A week at most: NaN, inf and the like are no time limit a deadline can be computed from.
  constexpr double kLongest = 7 * 24 * 3600;
  if (!(o.timeout_seconds > 0 && o.timeout_seconds <= kLongest))
    throw std::invalid_argument(
        fmt::format("--timeout {} must be a number of seconds above 0 and at most {}",
                    o.timeout_seconds, kLongest));
  if (!(o.compile_timeout_seconds >= 0 && o.compile_timeout_seconds <= kLongest))
    throw std::invalid_argument(
        fmt::format("--compile-timeout {} must be a number of seconds from 0 to {}",
                    o.compile_timeout_seconds, kLongest));
  if (o.reruns < 0) throw std::invalid_argument(fmt::format("--reruns {} is negative", o.reruns));
  if (o.repeat < 1)
    throw std::invalid_argument(fmt::format("--repeat {} must be 1 or more", o.repeat));
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (o.shard) ShardSpec::parse(*o.shard);  // bad input fails before anything is written
  const std::int64_t memory = worker_memory(o, jobs);

  if (o.warm) return warm(o, jobs, memory);
  ensure_parent_dir(o.db);
  Store store(o.db);
  // Recorded durations (one scan of the results) balance shards and order the queue.
  const std::map<std::string, double> durations = store.last_durations();
  Plan plan = o.resume ? plan_resumed_run(store, *o.resume)
                       : plan_new_run(store, o, durations, jobs, memory);
  Expected expected = expect(store, o, plan);
  const Execution done = execute(store, o, plan, expected, durations, jobs, memory);
  return conclude(store, o, plan.run, done);
}

namespace {

// The arguments `run` does not know, read as the suite's options spelt as flags: --world-size 4,
// --world-size=4, or --flag alone (true). Throws std::invalid_argument for anything else.
void add_suite_flags(const std::vector<std::string>& rest,
                     std::map<std::string, std::string>& into) {
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    if (arg.size() <= 2 || arg.rfind("--", 0) != 0)
      throw std::invalid_argument(fmt::format(
          "run: unexpected argument '{}' (run --help; a suite's options: neuron-conform suites)",
          arg));
    std::string name = arg.substr(2);
    std::string value = "true";
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < rest.size() && rest[i + 1].rfind("--", 0) != 0) {
      value = rest[++i];
    }
    std::replace(name.begin(), name.end(), '-', '_');
    into[name] = value;
  }
}

}  // namespace

Command add_run_command(CLI::App& cli, const std::string& command_line) {
  auto o = std::make_shared<RunOptions>();
  o->command_line = command_line;
  auto* cmd = cli.add_subcommand("run", "Run a suite against a backend and record the results");
  cmd->add_option("--suite", o->suite,
                  "Suite to run: a folder holding suite.py, in NEURON_CONFORM_SUITES or the "
                  "project's suites/ (`neuron-conform suites` lists those found, with their "
                  "checks and options; suites/README.md says how to write one). Default: the "
                  "project's default suite (suite_api.DEFAULT_SUITE, the operator suite)");
  cmd->add_option("--ops", o->ops_regex,
                  "Regular expression searched in the case subject (what the suite's cases are "
                  "about: an OpInfo name[.variant], an architecture class, ...); '^(add|mul)$' "
                  "selects exactly those two");
  cmd->add_option("--dtypes", o->dtypes, "Comma-separated dtypes (default: every dtype listed)")
      ->delimiter(',');
  cmd->add_option("--checks", o->checks,
                  "Comma-separated checks, as the suite declares them (`neuron-conform suites` "
                  "and the run's report list them; default: every check)")
      ->delimiter(',');
  cmd->add_option("-j,--jobs", o->jobs, "Worker processes (default: number of cores)");
  cmd->add_option("--shard", o->shard,
                  "Run shard K of N (K/N, 1-based), balanced by recorded durations");
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Per-case limit of run time in seconds: the time a case spends compiling, as "
                  "the backend's compile_cache_stats() shows it, is not counted")
      ->capture_default_str();
  cmd->add_option("--compile-timeout", o->compile_timeout_seconds,
                  "Compile time a case is given beside --timeout, in seconds (a hung compiler "
                  "still times out; 0: compile time counts against --timeout)")
      ->capture_default_str();
  cmd->add_option("--max-worker-memory", o->max_worker_memory,
                  "Memory each worker may allocate (512M, 6G; 0: no limit), as RLIMIT_DATA: a case "
                  "that exceeds it is a crash saying so and the run goes on; a worker left past "
                  "half of it after a case retires, and the next case gets a fresh one. Default: "
                  "the machine's memory less a tenth (at least 2 GiB) for the harness, shared by "
                  "the workers (-j)")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/false))
      ->check(CLI::Validator(
          [](std::string& bytes) {
            return bytes.starts_with('-') ? std::string("a size is not negative") : std::string();
          },
          "SIZE"));
  cmd->add_option(
         "--reruns", o->reruns,
         "Run a case that failed (fail, error, crash, timeout) again, each time in a fresh "
         "worker, up to N times; a pass on a rerun records it as flaky, never as a pass. "
         "0 turns reruns off. Cases a skip list expects to fail are not rerun, unless "
         "their entry expects flakiness (category or expect flaky)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeat", o->repeat,
                  "Run every case N times in its worker, to hunt flakiness on purpose: outcomes "
                  "that differ make the case flaky")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--warm", o->warm,
                "Run the selected cases once only for what they compile, in parallel across the "
                "workers, so that the backend's persistent cache (NEURONSIM_CACHE_DIR for the "
                "bundled one) holds every executable they need and the run after it compiles "
                "nothing; prints what was compiled. Keeps no results (a scratch database)");
  cmd->add_flag("--blocking", o->blocking,
                "Run every device op at its call (the backend's launch-blocking switch: "
                "docs/backends.md), so that an op's error is raised by the op, not at a later "
                "synchronizing call; slower on an asynchronous device. Without it, an error raised "
                "outside its case is still attributed, by rerunning the cases before it alone");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--backend-module", o->backend_module, "Python module of the backend under test")
      ->capture_default_str();
  cmd->add_option("--device", o->device,
                  "Device string to test (default: the name the backend module gives its "
                  "PrivateUse1 device; docs/backends.md)");
  cmd->add_option("--resume", o->resume,
                  "Run only what this run (id, latest, previous) has not recorded");
  cmd->add_option("--seed", o->seed,
                  "Random seed for sample inputs; also the workers' string-hash seed "
                  "(PYTHONHASHSEED, unless set), so a traced graph is the same in every worker")
      ->capture_default_str();
  cmd->add_option("--label", o->label, "Free text stored with the run (e.g. nightly, PR number)");
  cmd->add_option("--skiplists", o->skiplists,
                  "Skip-list files or directories (default: those the backend ships, entry-point "
                  "group neuron_conform.skiplists)");
  cmd->add_flag("--no-skiplists", o->no_skiplists,
                "Use none of the backend's skip lists: run and report every case as observed (a "
                "suite's own list of cases no device can run still applies)");
  cmd->add_option_function<std::vector<std::string>>(
         "--suite-option",
         [o](const std::vector<std::string>& pairs) {
           for (const auto& pair : pairs) {
             const auto eq = pair.find('=');
             if (eq == std::string::npos || eq == 0)
               throw CLI::ValidationError("--suite-option",
                                          "expects NAME=VALUE, got '" + pair + "'");
             o->suite_options[pair.substr(0, eq)] = pair.substr(eq + 1);
           }
         },
         "NAME=VALUE, an option the suite declares (repeatable; `neuron-conform suites` lists "
         "them). A suite's option may also be given as a flag of its own: --world-size 4 is "
         "--suite-option world_size=4. The suite types and checks them before any case and "
         "refuses options it does not declare; the run stores them, typed, for --resume and "
         "repro")
      ->allow_extra_args(false);
  // Whatever the run does not know is the suite's (checked against its declaration).
  cmd->allow_extras();
  cmd->add_flag(
      "--strict", o->strict,
      "Exit 1 when any case fails (fail, error, crash, timeout, flaky) without a skip-list entry "
      "expecting it, passes although an entry expects it to fail (xpass), or fails differently "
      "from its entry's 'expect'; the summary names them");
  return {cmd,
          [o, cmd] {
            add_suite_flags(cmd->remaining(), o->suite_options);
            return run_command(*o);
          },
          2};
}

}  // namespace conform
