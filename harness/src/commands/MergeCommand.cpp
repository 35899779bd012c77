// `neuron-conform merge`: combines the shard DBs of one sharded run into one run.
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Vocabulary.h"
#include "record/Store.h"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace conform {

int merge_command(const MergeOptions& o) {
  if (o.inputs.empty()) throw std::invalid_argument("merge needs at least one input DB");
  struct Input {
    std::string path;
    RunInfo run;
    std::vector<std::string> planned;
    std::vector<CaseResult> results;
  };
  std::vector<Input> inputs;
  for (const auto& path : o.inputs) {
    if (!std::filesystem::exists(path))
      throw std::invalid_argument(fmt::format("merge input {} does not exist", path));
    Store store(path, /*create=*/false);
    const std::string id = store.resolve_run(o.run);
    inputs.push_back({path, *store.run(id), store.planned(id), store.results(id)});
  }
  // The shards must be of one run: same suite, versions and device.
  const RunInfo& first = inputs.front().run;
  for (const auto& in : inputs) {
    const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
        {"suite", {first.suite, in.run.suite}},
        {"torch version", {first.torch_version, in.run.torch_version}},
        {"backend module", {first.backend_module, in.run.backend_module}},
        {"backend version", {first.backend_version, in.run.backend_version}},
        {"harness version", {first.harness_version, in.run.harness_version}},
        {"device", {first.device, in.run.device}},
        {"seed", {std::to_string(first.seed), std::to_string(in.run.seed)}}};
    for (const auto& [name, values] : fields) {
      if (values.first != values.second) {
        throw std::invalid_argument(fmt::format("cannot merge: {} differs ({} in {}, {} in {})",
                                                name, values.first, inputs.front().path,
                                                values.second, in.path));
      }
    }
  }
  std::set<std::string> seen;
  std::vector<CaseId> plan;
  for (const auto& in : inputs) {
    for (const auto& id : in.planned) {
      if (!seen.insert(id).second) {
        throw std::invalid_argument(fmt::format(
            "cannot merge: case {} is in more than one input ({} among them)", id, in.path));
      }
      plan.push_back(CaseId::parse(id));
    }
  }

  ensure_parent_dir(o.output);
  Store out(o.output);
  RunInfo merged = first;
  merged.id = Store::new_run_id();
  merged.started_at = first.started_at;
  merged.shard = std::nullopt;
  merged.label = o.label ? o.label : first.label;
  merged.status = name(RunStatus::kRunning);
  merged.command = "merge";
  for (const auto& in : inputs) merged.command += fmt::format(" {}:{}", in.path, in.run.id);
  out.create_run(merged);
  out.record_plan(merged.id, plan);
  std::size_t recorded = 0;
  for (const auto& in : inputs) {
    out.record_results(merged.id, in.results);
    recorded += in.results.size();
  }
  out.finish_run(merged.id);
  fmt::print("merged {} input run(s) into run {} in {}: {} planned cases, {} results\n",
             inputs.size(), merged.id, o.output, plan.size(), recorded);
  return 0;
}

Command add_merge_command(CLI::App& cli) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = cli.add_subcommand("merge", "Combine the shard DBs of one sharded run into one run");
  cmd->add_option("inputs", o->inputs, "Shard databases")->required();
  cmd->add_option("-o,--output,--db", o->output, "Output database")->required();
  cmd->add_option("--run", o->run, "Run to take from each input (id, latest, previous)")
      ->capture_default_str();
  cmd->add_option("--label", o->label, "Label of the merged run (default: the first input's)");
  return {cmd, [o] { return merge_command(*o); }, 2};
}

}  // namespace conform
