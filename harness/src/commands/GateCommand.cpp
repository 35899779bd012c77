// `neuron-conform gate`: a release gate of a run against a baseline run, or of the newest run of
// every suite a baseline file holds against its section: one Markdown verdict, one exit code.
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Files.h"
#include "compare/Gate.h"
#include "record/Store.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conform {

namespace {

int write_baseline(Store& store, const GateOptions& o) {
  const std::vector<std::string> runs =
      o.run ? std::vector<std::string>{store.resolve_run(*o.run)} : store.newest_run_of_each_suite();
  if (runs.empty()) throw std::invalid_argument(fmt::format("{} holds no run", o.db));
  std::vector<std::pair<Snapshot, RunInfo>> sections;
  for (const auto& id : runs) sections.emplace_back(snapshot_of_run(store, id), *store.run(id));
  ensure_parent_dir(*o.write_baseline);
  write_file(*o.write_baseline, baseline_json(sections).dump(1) + "\n");
  for (const auto& [snapshot, run] : sections)
    fmt::print("wrote baseline {} for suite {} from run {} ({} cases)\n", *o.write_baseline,
               snapshot.suite, run.id, snapshot.cases.size());
  return 0;
}

// 1 (regressions, or a suite without a run) wins over 2 (only unacknowledged improvements).
int combined_exit(int a, int b) {
  if (a == 1 || b == 1) return 1;
  return std::max(a, b);
}

}  // namespace

int gate_command(const GateOptions& o) {
  Store store(o.db, /*create=*/false);
  if (o.write_baseline) return write_baseline(store, o);
  if (o.baseline.empty())
    throw std::invalid_argument(
        "--baseline is required (a run id, latest, previous, or a baseline file)");
  const GatePolicy policy = o.policy ? GatePolicy::load(*o.policy) : GatePolicy{};
  if (!o.baseline.ends_with(".json")) {  // a run against a run, of one suite
    const Snapshot baseline = snapshot_of_run(store, store.resolve_run(o.baseline));
    const std::string run_id = store.resolve_run(o.run.value_or("latest"));
    const Snapshot run = snapshot_of_run(store, run_id);
    if (baseline.suite != run.suite)
      throw std::invalid_argument(fmt::format("baseline {} is of suite '{}', run {} of suite '{}'",
                                              baseline.name, baseline.suite, run_id, run.suite));
    const GateVerdict verdict = judge(baseline, run, policy);
    fmt::print("{}", verdict.markdown);
    return verdict.exit_code;
  }
  // A baseline file: each of its suites against the newest run of that suite, or only the
  // section of --run's suite.
  std::vector<Snapshot> sections = load_baselines(o.baseline);
  std::optional<std::string> only_run;
  if (o.run) {
    only_run = store.resolve_run(*o.run);
    const std::string run_suite = store.run(*only_run)->suite;
    std::erase_if(sections, [&](const Snapshot& s) { return s.suite != run_suite; });
    if (sections.empty())
      throw std::invalid_argument(fmt::format("baseline {} has no section for suite '{}' (run {})",
                                              o.baseline, run_suite, *only_run));
  }
  int exit_code = 0;
  std::string summary, details;
  for (const Snapshot& baseline : sections) {
    const auto runs = only_run ? std::vector<std::string>{*only_run} : store.run_ids(baseline.suite);
    if (runs.empty()) {
      exit_code = 1;
      summary += fmt::format("| {} | FAIL: no run of the suite in {} | {} | — |\n", baseline.suite,
                             o.db, baseline.cases.size());
      continue;
    }
    const GateVerdict verdict = judge(baseline, snapshot_of_run(store, runs.back()), policy);
    exit_code = combined_exit(exit_code, verdict.exit_code);
    summary += fmt::format("| {} | {} | {} | `{}` |\n", baseline.suite, verdict.verdict,
                           baseline.cases.size(), runs.back());
    if (sections.size() > 1) details += fmt::format("## suite {}\n\n", baseline.suite);
    details += verdict.markdown + "\n";
  }
  // A suite that ran but has no section is not gated: news, until the baseline holds it.
  std::size_t ungated = 0;
  for (const auto& id : only_run ? std::vector<std::string>{} : store.newest_run_of_each_suite()) {
    const std::string suite = store.run(id)->suite;
    if (std::ranges::any_of(sections, [&](const Snapshot& s) { return s.suite == suite; })) continue;
    ++ungated;
    exit_code = combined_exit(exit_code, 2);
    summary += fmt::format("| {} | NOT GATED: no section in the baseline (`gate --write-baseline` "
                           "writes one) | — | `{}` |\n",
                           suite, id);
  }
  // The table of suites when there are several, or when the one suite could not be judged.
  if (sections.size() + ungated > 1 || details.empty())
    fmt::print("## neuron-conform gate over {} suite{}: {}\n\n| suite | verdict | baseline cases "
               "| run |\n| --- | --- | --- | --- |\n{}\n",
               sections.size() + ungated, sections.size() + ungated == 1 ? "" : "s",
               exit_code == 0 ? "PASS" : "FAIL",
               summary);
  fmt::print("{}", details);
  return exit_code;
}

Command add_gate_command(CLI::App& cli) {
  auto o = std::make_shared<GateOptions>();
  auto* cmd = cli.add_subcommand(
      "gate",
      "Release gate of a run against a baseline. Exit 0 pass, 1 regressions, 2 only "
      "unacknowledged improvements, 3 bad input; prints a Markdown verdict");
  cmd->add_option(
      "--baseline", o->baseline,
      "Baseline: a run (id, latest, previous) or a file written by --write-baseline");
  cmd->add_option("--run", o->run,
                  "Run to judge (id, latest, previous); default: with a baseline file, the newest "
                  "run of each suite it holds, else latest. With --write-baseline: that run only "
                  "(default: the newest run of each suite)");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--policy", o->policy,
                       "Policy file (JSON); default: any regression, crash, native op lost or new "
                       "fallback op fails, and improvements must be in the baseline");
  cmd->add_option("--write-baseline", o->write_baseline,
                  "Write a baseline file (e.g. ci/baseline.json), one section per suite, and exit");
  return {cmd, [o] { return gate_command(*o); }, 3};
}

}  // namespace conform
