// `neuron-conform gate`: a release gate of a run against a baseline run or file.
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Files.h"
#include "compare/Gate.h"
#include "record/Store.h"

#include <fmt/format.h>

namespace conform {

int gate_command(const GateOptions& o) {
  Store store(o.db, /*create=*/false);
  const std::string run_id = store.resolve_run(o.run);
  const Snapshot run = snapshot_of_run(store, run_id);
  if (o.write_baseline) {
    ensure_parent_dir(*o.write_baseline);
    write_file(*o.write_baseline, baseline_json(run, *store.run(run_id)).dump(1) + "\n");
    fmt::print("wrote baseline {} from run {} ({} cases)\n", *o.write_baseline, run_id,
               run.cases.size());
    return 0;
  }
  if (o.baseline.empty())
    throw std::invalid_argument(
        "--baseline is required (a run id, latest, previous, or a baseline file)");
  const bool is_file = o.baseline.ends_with(".json");
  const Snapshot baseline =
      is_file ? load_baseline(o.baseline) : snapshot_of_run(store, store.resolve_run(o.baseline));
  if (baseline.suite != run.suite)
    throw std::invalid_argument(fmt::format("baseline {} is of suite '{}', run {} of suite '{}'",
                                            baseline.name, baseline.suite, run_id, run.suite));
  const GatePolicy policy = o.policy ? GatePolicy::load(*o.policy) : GatePolicy{};
  const GateVerdict verdict = judge(baseline, run, policy);
  fmt::print("{}", verdict.markdown);
  return verdict.exit_code;
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
  cmd->add_option("--run", o->run, "Run to judge (id, latest, previous)")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--policy", o->policy,
                       "Policy file (JSON); default: any regression, crash, native op lost or new "
                       "fallback op fails, and improvements must be in the baseline");
  cmd->add_option("--write-baseline", o->write_baseline,
                       "Write the run as a baseline file (e.g. ci/baseline.json) and exit");
  return {cmd, [o] { return gate_command(*o); }, 3};
}

}  // namespace conform
