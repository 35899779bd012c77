// `neuron-conform api-compat`: the torch API compatibility table from the runs' evidence.
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Files.h"
#include "execute/Worker.h"
#include "plan/Listing.h"
#include "record/Store.h"
#include "report/ApiCompat.h"
#include "report/Coverage.h"
#include "report/Reports.h"

#include <fmt/format.h>

#include <filesystem>
#include <future>
#include <map>

namespace conform {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The public_api() of each suite of `runs` not in `apis` yet (null: it declares none), listed by
// one worker per suite at once, started as that suite's run started its workers (its backend,
// device and suite options: the upstream suite does not load without its test folder).
void add_public_apis(const std::vector<RunInfo>& runs, std::map<std::string, json>& apis) {
  std::map<std::string, std::future<json>> pending;
  for (const auto& run : runs)
    if (!apis.contains(run.suite) && !pending.contains(run.suite))
      pending.emplace(
          run.suite, std::async(std::launch::async,
                                [command = worker_command(run.suite, run.backend_module, run.device,
                                                          0, run.suite_options),
                                 suite = run.suite] {
                                  const ScratchLog log("api-" + suite);
                                  return list_public_api(command, log.path());
                                }));
  for (auto& [suite, future] : pending) apis[suite] = future.get();
}

// The runs named (resolved), else the newest run of each suite; only those whose suite declares
// its public API. A run named explicitly whose suite declares none is an error.
json table_of(Store& store, const std::string& db, const std::vector<std::string>& refs,
              std::map<std::string, json>& apis) {
  std::vector<std::string> ids;
  for (const auto& ref : refs) ids.push_back(store.resolve_run(ref));
  const bool named = !ids.empty();
  if (!named) ids = store.newest_run_of_each_suite();
  if (ids.empty()) throw StoreError(fmt::format("{} has no run", db));
  std::vector<RunInfo> runs;
  for (const auto& id : ids) runs.push_back(*store.run(id));
  add_public_apis(runs, apis);
  std::vector<ApiSource> sources;
  for (const auto& run : runs) {
    if (apis[run.suite].is_null()) {
      if (named)
        throw std::invalid_argument(fmt::format(
            "run {} is of suite '{}', which declares no public_api(): it tests no public API",
            run.id, run.suite));
      continue;
    }
    sources.push_back({build_coverage(store, run.id, db), apis[run.suite]});
  }
  if (sources.empty())
    throw std::invalid_argument(fmt::format(
        "{} has no run of a suite that declares its public API (ops, modules, optim, compile)",
        db));
  return api_compat(sources);
}

}  // namespace

int api_compat_command(const ApiCompatOptions& o) {
  Store store(o.db, /*create=*/false);
  std::map<std::string, json> apis;
  const json table = table_of(store, o.db, o.runs, apis);
  json changes = json::array();
  if (!o.against.empty())
    changes = api_compat_changes(table_of(store, o.db, o.against, apis), table);
  const fs::path out = o.out ? fs::path(*o.out) : fs::path(api_compat_dir(o.db));
  fs::create_directories(out);
  json document = table;
  document["changes"] = changes;
  write_file(out / "torch_api_compatibility.md", render_api_compat_markdown(table, changes));
  write_file(out / "torch_api_compatibility.csv", render_api_compat_csv(table));
  write_file(out / "torch_api_compatibility.json", document.dump(1) + "\n");
  for (const auto& r : table["runs"])
    fmt::print("from run {} (suite {}, {})\n", r["id"].get<std::string>(),
               r["suite"].get<std::string>(), r["mode"].get<std::string>());
  for (const auto& s : table["sections"]) {
    const json& e = s["counts"]["eager"];
    const json& c = s["counts"]["compile"];
    fmt::print(
        "{:<22} {:>4} entries  eager: {} Y, {} CPU_FALLBACK, {} N, {} untested  compile: {} Y, {} "
        "CPU_FALLBACK, {} N, {} untested\n",
        s["name"].get<std::string>(), s["entries"].size(), e["Y"].get<int>(),
        e["CPU_FALLBACK"].get<int>(), e["N"].get<int>(), e["untested"].get<int>(),
        c["Y"].get<int>(), c["CPU_FALLBACK"].get<int>(), c["N"].get<int>(),
        c["untested"].get<int>());
  }
  if (!o.against.empty())
    fmt::print("{} status change(s) against the runs compared\n", changes.size());
  fmt::print("table: {} (.csv, .json)\n", (out / "torch_api_compatibility.md").string());
  return 0;
}

Command add_api_compat_command(CLI::App& cli) {
  auto o = std::make_shared<ApiCompatOptions>();
  auto* cmd = cli.add_subcommand(
      "api-compat",
      "The torch API compatibility table (torch_api_compatibility.md, .csv, .json) in "
      "TorchNeuron's shape, derived from the runs' evidence: every public API entry an OpInfo, "
      "ModuleInfo or OptimizerInfo tests, by namespace, with its eager and torch.compile status "
      "(Y, CPU_FALLBACK naming the aten ops that fell back and their dtypes, N with the outcome "
      "and why, untested with why) and the dtypes it works at (docs/api-compat.md). Exit 0, 2 "
      "bad input");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option(
         "--runs", o->runs,
         "Comma-separated runs (id, latest, previous); default: the newest run of each suite "
         "that declares its public API (ops, modules, optim: eager; compile: torch.compile)")
      ->delimiter(',');
  cmd->add_option(
         "--against", o->against,
         "Comma-separated runs to compare with: the entries whose status differs are listed")
      ->delimiter(',');
  cmd->add_option("--out", o->out, "Output directory (default: api-compat/ beside the DB)");
  return {cmd, [o] { return api_compat_command(*o); }, 2};
}

}  // namespace conform
