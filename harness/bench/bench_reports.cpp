// Benchmark: `report` on a full operator-suite run, and `dashboard` over 365 nightly runs
// (targets: each under 5 s). Generates the history in a scratch DB: 365 runs of 16,231 cases
// (the size of the ops suite with every check), outcomes drifting from night to night, one
// aten op event per case, and each night's digest saved as the nightly `report` saves it.
// Prints the times, and ratios against reading the same data back (the floor); a measurement,
// not a test.
#include "common/CaseId.h"
#include "record/Store.h"
#include "report/Dashboard.h"
#include "report/Reports.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int nights = argc > 1 ? std::atoi(argv[1]) : 365;
  constexpr int kSubjects = 702, kCasesPerNight = 16231;
  const char* dtypes[] = {"float32", "bfloat16", "float16", "float64",   "int32",      "int64",
                          "int8",    "uint8",    "bool",    "complex64", "complex128", "int16"};
  const char* checks[] = {"forward", "out", "inplace", "backward", "forward_ad"};
  using conform::Outcome;
  const Outcome outcomes[] = {Outcome::kPass,     Outcome::kPass,     Outcome::kPass,
                              Outcome::kFallback, Outcome::kFallback, Outcome::kXfail,
                              Outcome::kXfail,    Outcome::kFail,     Outcome::kError};

  const fs::path dir = fs::temp_directory_path() / "neuron-conform-bench-reports";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "results.db").string();
  conform::Store store(db);

  std::vector<conform::CaseId> cases;
  for (int i = 0; cases.size() < kCasesPerNight; ++i) {
    cases.push_back({"ops", fmt::format("op{:03d}", i % kSubjects), dtypes[(i / kSubjects) % 12],
                     checks[(i / (kSubjects * 12)) % 5]});
  }
  std::mt19937 rng(7);
  std::vector<int> state(cases.size());
  for (auto& s : state) s = static_cast<int>(rng() % 9);

  const nlohmann::json fail_evidence = {
      {"max_abs_error", 0.5}, {"max_rel_error", 0.1}, {"message", "Tensor-likes are not close!"}};
  const nlohmann::json pass_evidence = {{"rtol", 1.3e-06}, {"atol", 1e-05}};
  fmt::print("generating {} nights of {} cases in {} ...\n", nights, cases.size(), db);
  const auto generate_start = Clock::now();
  double digest_seconds = 0;
  for (int night = 0; night < nights; ++night) {
    conform::RunInfo run;
    run.id = fmt::format("2026{:04d}-000000-b{:03d}", night, night % 1000);
    run.suite = "ops";
    run.started_at =
        fmt::format("2026-01-01T00:00:{:02d}.{:03d}Z", night / 1000 % 60, night % 1000);
    run.ended_at = run.started_at;
    run.host = "bench";
    run.torch_version = "2.13.0";
    run.backend_module = "torch_neuronsim";
    run.backend_version = "bench";
    run.harness_version = "bench";
    run.device = "neuron";
    run.status = "complete";
    run.backend_info = {{"native_ops", nlohmann::json::array({"aten::op000", "aten::op001"})}};
    store.create_run(run);
    store.record_plan(run.id, cases);
    for (int k = 0; k < 40; ++k)
      state[rng() % state.size()] = static_cast<int>(rng() % 9);  // drift
    std::vector<conform::CaseResult> results;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      conform::CaseResult r{
          cases[i].str(), outcomes[state[i]], 0.01 * (i % 7), fail_evidence, {}, {}, {}};
      if (r.outcome != Outcome::kFail) r.evidence = pass_evidence;
      (r.outcome == Outcome::kFallback ? r.fallback_ops
                                       : r.native_ops)["aten::" + cases[i].subject] = 1;
      results.push_back(std::move(r));
    }
    store.record_results(run.id, results);
    const auto digest_start = Clock::now();
    conform::run_digest(store, run.id, db);  // what the nightly report saves
    digest_seconds += seconds_since(digest_start);
    if ((night + 1) % 50 == 0) fmt::print("  {} nights\n", night + 1);
  }
  fmt::print("generated in {:.1f} s ({:.1f} s of it the nightly digests, {:.3f} s per night)\n",
             seconds_since(generate_start), digest_seconds, digest_seconds / nights);

  const std::string newest = store.resolve_run("latest");
  auto start = Clock::now();
  const auto read = store.results(newest);
  const double read_seconds = seconds_since(start);
  start = Clock::now();
  conform::write_reports(store, newest, db, (dir / "report").string());
  const double report_seconds = seconds_since(start);
  fmt::print(
      "report of one full run ({} cases): {:.2f} s (target < 5 s); reading its results "
      "alone {:.2f} s, ratio {:.1f}x\n",
      read.size(), report_seconds, read_seconds, report_seconds / read_seconds);

  start = Clock::now();
  for (const auto& id : store.run_ids("ops")) store.digest(id);
  const double digests_seconds = seconds_since(start);
  start = Clock::now();
  const auto model =
      conform::build_dashboard(store, db, std::string("ops"), (dir / "dashboard").string());
  conform::write_dashboard(model, (dir / "dashboard").string());
  const double dashboard_seconds = seconds_since(start);
  fmt::print(
      "dashboard over {} runs: {:.2f} s (target < 5 s); reading the digests alone {:.2f} s, "
      "ratio {:.1f}x; {} KiB of HTML\n",
      model["suites"][0]["runs"].size(), dashboard_seconds, digests_seconds,
      dashboard_seconds / digests_seconds, fs::file_size(dir / "dashboard" / "index.html") >> 10);
  fs::remove_all(dir);
  return 0;
}
