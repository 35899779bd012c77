// The scheduler against a stand-in worker (fake_worker.py): crash, timeout and protocol
// errors are recorded, a fresh worker replaces a dead one, and every case gets one result.
#include "schedule/Progress.h"
#include "schedule/Scheduler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>

using conform::CaseResult;
using conform::Outcome;
using conform::ScheduleOptions;
using conform::Scheduler;

namespace {

ScheduleOptions fake_worker_options(int jobs) {
  ScheduleOptions options;
  options.jobs = jobs;
  options.worker.python = TEST_PYTHON;
  options.worker.script = FAKE_WORKER;
  options.log_dir = (std::filesystem::temp_directory_path() / "conform-scheduler-test").string();
  std::filesystem::create_directories(options.log_dir);
  return options;
}

std::map<std::string, CaseResult> run_cases(const std::vector<std::string>& cases, int jobs,
                                            std::chrono::milliseconds timeout,
                                            conform::ScheduleStats* stats = nullptr, int reruns = 0,
                                            std::vector<std::string>* amended = nullptr) {
  ScheduleOptions options = fake_worker_options(jobs);
  options.case_timeout = timeout;
  options.reruns = reruns;
  options.attribute_blocking = true;
  std::map<std::string, CaseResult> results;
  Scheduler scheduler(options, [&](const CaseResult& r, bool amends) {
    if (amends) {
      EXPECT_TRUE(results.contains(r.case_id)) << "amended before it was recorded: " << r.case_id;
      if (amended) amended->push_back(r.case_id);
    } else {
      EXPECT_FALSE(results.contains(r.case_id)) << "recorded twice: " << r.case_id;
    }
    results[r.case_id] = r;
  });
  const auto s = scheduler.run(cases);
  if (stats) *stats = s;
  return results;
}

}  // namespace

TEST(Scheduler, RunsEveryCaseOnce) {
  std::vector<std::string> cases;
  for (int i = 0; i < 20; ++i) cases.push_back("t/ok/" + std::to_string(i) + "/-");
  const auto results = run_cases(cases, 3, std::chrono::seconds(30));
  ASSERT_EQ(results.size(), 20u);
  for (const auto& [id, r] : results) EXPECT_EQ(r.outcome, Outcome::kPass) << id;
}

TEST(Scheduler, CrashTimeoutAndProtocolErrorsAreRecordedAndTheRunGoesOn) {
  const std::vector<std::string> cases{
      "t/ok/1/-",   "t/crash/-/-",   "t/ok/2/-",      "t/hang/-/-", "t/ok/3/-", "t/abort/-/-",
      "t/exit/-/-", "t/garbage/-/-", "t/wrongid/-/-", "t/fail/-/-", "t/ok/4/-"};
  conform::ScheduleStats stats;
  const auto results = run_cases(cases, 2, std::chrono::milliseconds(1500), &stats);
  ASSERT_EQ(results.size(), cases.size());
  EXPECT_EQ(results.at("t/crash/-/-").outcome, Outcome::kCrash);
  EXPECT_EQ(results.at("t/crash/-/-").evidence.at("signal"), 11);
  EXPECT_EQ(results.at("t/crash/-/-").evidence.at("signal_name"), "SIGSEGV");
  EXPECT_EQ(results.at("t/abort/-/-").evidence.at("signal_name"), "SIGABRT");
  EXPECT_NE(results.at("t/abort/-/-")
                .evidence.at("stderr_tail")
                .get<std::string>()
                .find("about to abort"),
            std::string::npos);
  EXPECT_EQ(results.at("t/exit/-/-").outcome, Outcome::kCrash);
  EXPECT_EQ(results.at("t/exit/-/-").evidence.at("exit_code"), 7);
  EXPECT_EQ(results.at("t/hang/-/-").outcome, Outcome::kTimeout);
  EXPECT_DOUBLE_EQ(results.at("t/hang/-/-").evidence.at("timeout_seconds").get<double>(), 1.5);
  EXPECT_EQ(results.at("t/garbage/-/-").outcome, Outcome::kError);
  EXPECT_EQ(results.at("t/garbage/-/-").evidence.at("exception_type"), "ProtocolError");
  EXPECT_EQ(results.at("t/wrongid/-/-").outcome, Outcome::kError);
  EXPECT_EQ(results.at("t/fail/-/-").outcome, Outcome::kFail);
  for (const char* ok : {"t/ok/1/-", "t/ok/2/-", "t/ok/3/-", "t/ok/4/-"})
    EXPECT_EQ(results.at(ok).outcome, Outcome::kPass);
  EXPECT_EQ(stats.crashes, 3);
  EXPECT_EQ(stats.timeouts, 1);
  EXPECT_GE(stats.workers_started, 6);  // every dead or killed worker was replaced
}

// A case's timeout counts its run time: the compile time its worker reports is given beside
// it, up to the compile timeout; a hang that does not compile times out as before, and so does a
// worker flooding progress lines that report nothing. A malformed progress line is a protocol
// error of the case, not of the run.
TEST(Scheduler, CompileTimeIsGivenBesideTheTimeoutUpToTheCompileTimeout) {
  ScheduleOptions options = fake_worker_options(3);
  options.case_timeout = std::chrono::milliseconds(1500);
  options.compile_timeout = std::chrono::seconds(4);
  const auto run = [&](const std::vector<std::string>& cases) {
    std::map<std::string, CaseResult> results;
    Scheduler(options, [&](const CaseResult& r, bool) { results[r.case_id] = r; }).run(cases);
    return results;
  };
  auto results =
      run({"t/compile/3/-", "t/compile/inf/-", "t/hang/-/-", "t/flood/-/-", "t/badprogress/-/-"});
  EXPECT_EQ(results.at("t/compile/3/-").outcome, Outcome::kPass);
  const CaseResult& endless = results.at("t/compile/inf/-");
  EXPECT_EQ(endless.outcome, Outcome::kTimeout);
  EXPECT_GE(endless.evidence.at("compiling_seconds").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(endless.evidence.at("compile_timeout_seconds").get<double>(), 4.0);
  EXPECT_GE(endless.duration, 5.5);  // the timeout and the compile timeout, both waited out
  for (const char* hang : {"t/hang/-/-", "t/flood/-/-"}) {
    EXPECT_EQ(results.at(hang).outcome, Outcome::kTimeout) << hang;
    EXPECT_FALSE(results.at(hang).evidence.contains("compiling_seconds")) << hang;
    EXPECT_LT(results.at(hang).duration, 4.0) << hang;
  }
  EXPECT_EQ(results.at("t/badprogress/-/-").outcome, Outcome::kError);
  EXPECT_EQ(results.at("t/badprogress/-/-").evidence.at("exception_type"), "ProtocolError");

  options.compile_timeout = std::chrono::milliseconds(0);  // compile time counts as run time
  results = run({"t/compile/3/-"});
  EXPECT_EQ(results.at("t/compile/3/-").outcome, Outcome::kTimeout);
}

// An error the device raises before the worker's next case belongs to a case the worker ran:
// the one that fails when rerun alone (blocking), whose result is amended; the case that was
// about to run gets a fresh worker, and no other verdict changes.
TEST(Scheduler, ALateErrorBeforeTheNextCaseIsChargedToTheCaseThatQueuedIt) {
  conform::ScheduleStats stats;
  std::vector<std::string> amended;
  const auto results = run_cases({"t/ok/1/-", "t/late/1/-", "t/ok/2/-", "t/ok/3/-"}, 1,
                                 std::chrono::seconds(30), &stats, 0, &amended);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(amended, std::vector<std::string>{"t/late/1/-"});
  const CaseResult& late = results.at("t/late/1/-");
  EXPECT_EQ(late.outcome, Outcome::kError);
  EXPECT_EQ(late.evidence.at("failing_op"), "aten::late.default");
  EXPECT_EQ(late.evidence.at("surfaced_at"), "next case start");
  EXPECT_EQ(late.evidence.at("outcome_before"), "pass");
  EXPECT_EQ(late.evidence.at("candidates"), nlohmann::json({"t/late/1/-", "t/ok/1/-"}));
  for (const char* ok : {"t/ok/1/-", "t/ok/2/-", "t/ok/3/-"})
    EXPECT_EQ(results.at(ok).outcome, Outcome::kPass) << ok;
  EXPECT_EQ(stats.late_errors, 1);
  EXPECT_EQ(stats.late_attributed, 1);
}

TEST(Scheduler, ALateErrorAtTheWorkersExitIsChargedToTheCaseThatQueuedIt) {
  conform::ScheduleStats stats;
  const auto results =
      run_cases({"t/ok/1/-", "t/ok/2/-", "t/late/2/-"}, 1, std::chrono::seconds(30), &stats);
  EXPECT_EQ(results.at("t/late/2/-").outcome, Outcome::kError);
  EXPECT_EQ(results.at("t/late/2/-").evidence.at("surfaced_at"), "worker exit");
  EXPECT_EQ(results.at("t/ok/1/-").outcome, Outcome::kPass);
  EXPECT_EQ(results.at("t/ok/2/-").outcome, Outcome::kPass);
  EXPECT_EQ(stats.late_attributed, 1);
}

// The error surfaces inside the next case: that case fails, then passes alone; before calling it
// flaky, its predecessors are rerun alone, and the one that fails takes the error.
TEST(Scheduler, AnErrorAnEarlierCaseLeftInsideTheNextOneIsTheEarlierCases) {
  conform::ScheduleStats stats;
  std::vector<std::string> amended;
  const auto results = run_cases({"t/ok/1/-", "t/late_inside/1/-", "t/ok/2/-", "t/ok/3/-"}, 1,
                                 std::chrono::seconds(30), &stats, 1, &amended);
  EXPECT_EQ(amended, std::vector<std::string>{"t/late_inside/1/-"});
  const CaseResult& guilty = results.at("t/late_inside/1/-");
  EXPECT_EQ(guilty.outcome, Outcome::kError);
  EXPECT_EQ(guilty.evidence.at("surfaced_at"), "t/ok/2/-");
  const CaseResult& met = results.at("t/ok/2/-");
  EXPECT_EQ(met.outcome, Outcome::kPass);  // not flaky: its one failure was another case's
  EXPECT_EQ(met.evidence.at("met_late_error").at("of"), "t/late_inside/1/-");
  EXPECT_EQ(stats.flaky, 0);
  EXPECT_EQ(results.at("t/ok/3/-").outcome, Outcome::kPass);
}

// A late error found while its case's own attempts go on (--repeat: the second attempt's worker
// meets the first's error) amends the result the case then delivers: recorded once, amended once.
TEST(Scheduler, ALateErrorOfACaseStillRunningAmendsWhatItDelivers) {
  ScheduleOptions options = fake_worker_options(1);
  options.repeat = 2;
  options.attribute_blocking = true;
  std::vector<std::pair<CaseResult, bool>> delivered;
  Scheduler scheduler(options,
                      [&](const CaseResult& r, bool amends) { delivered.emplace_back(r, amends); });
  scheduler.run({"t/late/1/-"});
  // recorded first, then amended: by the error its first attempt left for the second, and (each
  // attempt queues one) by the one its last attempt left for its worker's exit
  ASSERT_GE(delivered.size(), 2u);
  EXPECT_FALSE(delivered[0].second);
  EXPECT_EQ(delivered[1].first.evidence.at("surfaced_at"), "next case start");
  for (std::size_t i = 1; i < delivered.size(); ++i) {
    EXPECT_TRUE(delivered[i].second);
    EXPECT_EQ(delivered[i].first.outcome, Outcome::kError);
  }
}

// A group (group_of) goes to one worker whole, its cases one after another.
TEST(Scheduler, AGroupOfCasesRunsOnOneWorker) {
  ScheduleOptions options = fake_worker_options(3);
  options.group_of = [](const std::string& id) { return id.substr(0, id.rfind('/')); };
  std::vector<std::string> cases;
  for (int group = 0; group < 4; ++group)
    for (int i = 0; i < 5; ++i) cases.push_back(fmt::format("t/ok/{}/{}", group, i));
  std::map<std::string, std::set<int>> pids_of_group;
  Scheduler scheduler(options, [&](const CaseResult& r, bool) {
    pids_of_group[r.case_id.substr(0, r.case_id.rfind('/'))].insert(
        r.evidence.at("pid").get<int>());
  });
  scheduler.run(cases);
  ASSERT_EQ(pids_of_group.size(), 4u);
  for (const auto& [group, pids] : pids_of_group) EXPECT_EQ(pids.size(), 1u) << group;
}

TEST(Scheduler, AWorkerThatCannotStartIsReportedPerCase) {
  ScheduleOptions options;
  options.jobs = 1;
  options.worker.python = TEST_PYTHON;
  options.worker.script = "/nonexistent/worker.py";
  options.log_dir = std::filesystem::temp_directory_path().string();
  std::vector<CaseResult> results;
  Scheduler scheduler(options, [&](const CaseResult& r, bool) { results.push_back(r); });
  scheduler.run({"t/ok/1/-"});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome, Outcome::kCrash);
  EXPECT_EQ(results[0].evidence.at("reason"), "worker failed to start");
}

TEST(Scheduler, AFailureToRecordStopsTheRunAndReachesTheCaller) {
  ScheduleOptions options = fake_worker_options(2);
  options.case_timeout = std::chrono::seconds(30);
  std::vector<std::string> cases;
  for (int i = 0; i < 40; ++i) cases.push_back("t/ok/" + std::to_string(i) + "/-");
  std::atomic<int> delivered{0};
  Scheduler scheduler(options, [&](const CaseResult&, bool) {
    if (++delivered == 3) throw std::runtime_error("the store refused a result");
  });
  EXPECT_THROW(scheduler.run(cases), std::runtime_error);  // not std::terminate in a slot thread
  EXPECT_LT(delivered.load(), 40);                         // no case handed out after it
}

// Cases run longest first: the time left is the recorded work left at the run's pace so far, not
// the cases left at the average case's pace (which promised an ops run hours at its start).
TEST(Progress, EstimatesTheTimeLeftFromRecordedDurations) {
  std::vector<std::string> cases{"long"};
  std::map<std::string, double> durations{{"long", 90.0}};
  for (int i = 0; i < 100; ++i) {
    cases.push_back("short" + std::to_string(i));
    durations[cases.back()] = 0.1;
  }
  conform::Progress progress(cases, durations, false);
  EXPECT_EQ(progress.eta_seconds(1.0), 0.0);  // nothing done: no pace to go by
  progress.add(CaseResult{"long", Outcome::kPass, 90.0, {}, {}, {}, {}});
  // 90 recorded seconds done in 45 (two jobs): the 10 left take 5, where counting cases said 4500
  EXPECT_NEAR(progress.eta_seconds(45.0), 5.0, 1e-9);
  for (int i = 0; i < 100; ++i)
    progress.add(CaseResult{cases[i + 1], Outcome::kPass, 0.1, {}, {}, {}, {}});
  EXPECT_NEAR(progress.eta_seconds(50.0), 0.0, 1e-9);
}

TEST(Progress, CasesWithoutARecordedDurationCountAsTheAverageOne) {
  conform::Progress known(std::vector<std::string>{"a", "b", "new"}, {{"a", 1.0}, {"b", 3.0}},
                          false);
  known.add(CaseResult{"a", Outcome::kPass, 1.0, {}, {}, {}, {}});
  EXPECT_NEAR(known.eta_seconds(2.0), 2.0 * (3.0 + 2.0), 1e-9);  // "new" counts as 2 s
  conform::Progress none(std::vector<std::string>{"x", "y", "z", "w"}, {}, false);
  none.add(CaseResult{"x", Outcome::kPass, 1.0, {}, {}, {}, {}});
  EXPECT_NEAR(none.eta_seconds(10.0), 30.0, 1e-9);  // nothing recorded: each case alike
}
