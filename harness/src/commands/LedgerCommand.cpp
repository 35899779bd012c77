// `neuron-conform ledger`: which aten overloads with a CPU kernel the runs reached at the device,
// and why the others were not (docs/ledger.md).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Ledger.h"
#include "execute/Worker.h"
#include "expect/Dispositions.h"
#include "plan/Listing.h"
#include "record/Store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <set>

namespace conform {
namespace {

struct Source {
  Overloads overloads;
  std::string from;  // where the list came from, for the summary
};

// The overloads of the newest given run that stored them (the torch it ran), else the installed
// torch's, from a worker.
Source overloads_of(Store* store, const std::vector<std::string>& runs,
                    const std::string& backend_module) {
  if (store) {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      const auto run = store->run(*it);
      const auto& info = run->backend_info;
      if (info.contains("cpu_overloads") && info["cpu_overloads"].is_array())
        return {{run->torch_version, info["cpu_overloads"].get<std::vector<std::string>>(),
                 info.value("device_composite", std::vector<std::string>())},
                fmt::format("run {}", *it)};
    }
  }
  const ScratchLog log("ledger");
  return {list_overloads(worker_command("", backend_module, "", 0), log.path()),
          "the installed torch"};
}

// ledger/dispositions.json beside the skip lists the backend ships (a folder of its own: a skip
// list folder's *.json are all lists), or none: a backend need not ship any.
std::optional<std::string> default_dispositions_path(const std::string& backend_module) {
  return dispositions_in(backend_skiplists(backend_module));
}

// Whether a run recorded which ops its cases ran: runs since the dispatcher capture always do
// (backend_info.op_sources); older ones only with the backend's own tracking.
bool observed_ops(const RunInfo& run) {
  const auto& info = run.backend_info;
  return (info.contains("op_sources") && !info["op_sources"].empty()) ||
         info.value("tracking", false);
}

void print_problems(const DispositionsFile& d) {
  for (const auto& p : d.problems) fmt::print(stderr, "{}\n", p.str());
}

}  // namespace

int ledger_command(const LedgerOptions& o) {
  if (o.lint) {
    const std::string backend = o.backend_module.value_or(kDefaultBackendModule);
    const auto found = o.dispositions ? o.dispositions : default_dispositions_path(backend);
    if (!found)
      throw std::invalid_argument(fmt::format(
          "backend '{}' ships no ledger/dispositions.json with its skip lists (entry-point group "
          "neuron_conform.skiplists): give the file to lint with --dispositions",
          backend));
    const std::string& path = *found;
    const Source source = overloads_of(nullptr, {}, backend);
    const std::set<std::string> known(source.overloads.names.begin(), source.overloads.names.end());
    const DispositionsFile d = load_dispositions(path, &known);
    print_problems(d);
    if (!d.problems.empty()) {
      fmt::print(stderr, "neuron-conform: ledger lint: {} problem(s) in {}\n", d.problems.size(),
                 path);
      return 1;
    }
    std::size_t names = 0;
    for (const auto& e : d.entries) names += e.overloads.size();
    fmt::print("{} clean: {} entries, {} overloads of torch {}\n", path, d.entries.size(), names,
               source.overloads.torch_version);
    return 0;
  }
  if (o.format != "text" && o.format != "json")
    throw std::invalid_argument(fmt::format("unknown --format '{}' (text or json)", o.format));
  if (o.fail_under && (*o.fail_under < 0 || *o.fail_under > 100))
    throw std::invalid_argument(
        fmt::format("--fail-under {} is not a percentage (0 to 100)", *o.fail_under));

  Store store(o.db, /*create=*/false);
  std::vector<std::string> runs;
  for (const auto& ref : o.runs) runs.push_back(store.resolve_run(ref));
  if (runs.empty()) runs = store.newest_run_of_each_suite();
  if (runs.empty()) throw std::invalid_argument(fmt::format("{} holds no run", o.db));

  // The backend is the runs' (the newest given), unless named.
  const std::string backend = o.backend_module.value_or(store.run(runs.back())->backend_module);
  const Source source = overloads_of(&store, runs, backend);
  const std::set<std::string> known(source.overloads.names.begin(), source.overloads.names.end());
  const auto found = o.dispositions ? o.dispositions : default_dispositions_path(backend);
  const std::string path = found ? *found : "none (the backend ships no ledger/dispositions.json)";
  // No file: nothing is disposed of, every unreached overload is listed as such.
  const DispositionsFile dispositions =
      found ? load_dispositions(*found, &known) : DispositionsFile{};
  if (!dispositions.problems.empty()) {
    print_problems(dispositions);
    throw std::invalid_argument(fmt::format("{} problem(s) in the dispositions file {}",
                                            dispositions.problems.size(), path));
  }
  std::vector<std::string> unobserved;  // runs that could not say which ops they ran
  for (const auto& id : runs)
    if (!observed_ops(*store.run(id))) unobserved.push_back(id);
  if (unobserved.size() == runs.size()) {
    const std::string why = fmt::format(
        "not observable: run(s) {} recorded no op tracking (recorded before the harness captured "
        "ops from the dispatcher, against a backend without its own tracking), so which overloads "
        "they reached is unknown; run again with this harness",
        fmt::join(unobserved, ", "));
    if (o.format == "json")
      fmt::print("{}\n",
                 nlohmann::json{{"runs", runs}, {"observable", false}, {"why", why}}.dump(1));
    else
      fmt::print("{}\n", why);
    return o.fail_under ? 1 : 0;
  }
  const Ledger ledger =
      build_ledger(source.overloads.names, store.reached_ops(runs), dispositions.by_overload(),
                   {source.overloads.composite.begin(), source.overloads.composite.end()});

  std::vector<std::string> described;
  for (const auto& id : runs) described.push_back(fmt::format("{} ({})", id, store.run(id)->suite));
  if (o.format == "json") {
    nlohmann::json out = ledger_json(ledger, 10, /*with_rows=*/true);
    out["runs"] = runs;
    out["torch"] = source.overloads.torch_version;
    out["overloads_from"] = source.from;
    out["dispositions"] = path;
    out["observable"] = true;
    if (!unobserved.empty()) out["runs_without_op_tracking"] = unobserved;
    if (o.fail_under) out["fail_under"] = *o.fail_under;
    fmt::print("{}\n", out.dump(1));
  } else {
    if (!o.summary_only) {
      for (const auto& r : ledger.rows) {
        fmt::print("{:<58} {:<9} {}\n", r.overload,
                   r.status == LedgerStatus::kUnreached ? "unreached" : name(r.status),
                   r.status == LedgerStatus::kUnreached ? "no disposition"
                   : r.case_id.empty()                  ? r.reason
                                                        : r.case_id);
      }
      fmt::print("\n");
    }
    fmt::print("runs: {}; overloads of torch {} from {}; dispositions {}\n",
               fmt::join(described, ", "), source.overloads.torch_version, source.from, path);
    if (!unobserved.empty())
      fmt::print("not counted (no op tracking): {}\n", fmt::join(unobserved, ", "));
    fmt::print("{}", ledger_summary(ledger));
  }
  if (o.fail_under && ledger.coverage_percent() < *o.fail_under) {
    fmt::print(stderr, "neuron-conform: ledger coverage {:.1f}% is below --fail-under {}%\n",
               ledger.coverage_percent(), *o.fail_under);
    return 1;
  }
  return 0;
}

Command add_ledger_command(CLI::App& cli) {
  auto o = std::make_shared<LedgerOptions>();
  auto* cmd = cli.add_subcommand(
      "ledger",
      "Every aten overload of torch with a CPU kernel: reached at the device by the runs (native "
      "or fallback, with a case that did), disposed of by the backend's ledger/dispositions.json "
      "(not_applicable, unreached, with a reason), served by a composite kernel on the device "
      "(the backend has none of its own; found in the dispatcher), or unreached with no "
      "disposition. Coverage = reached / (all - not_applicable - composite). Exit 0, 1 below "
      "--fail-under, 2 bad input (docs/ledger.md)");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--runs", o->runs,
                  "Comma-separated runs (id, latest, previous) whose op events count; default: "
                  "the latest run of each suite in the DB")
      ->delimiter(',');
  cmd->add_option("--fail-under", o->fail_under,
                  "Exit 1 when the coverage is below this percentage (for CI)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--format", o->format,
                  "text (a line per overload, then the summary) or json (counts and rows)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--summary", o->summary_only,
                "text: only the summary (numbers, unreached kinds and families)");
  cmd->add_option("--dispositions", o->dispositions,
                  "Dispositions file (default: ledger/dispositions.json in the folder of skip "
                  "lists the backend ships)");
  cmd->add_flag("--lint", o->lint,
                "Only check the dispositions file against the installed torch (unknown "
                "overloads, missing reasons, duplicates); exit 1 on any problem");
  cmd->add_option("--backend-module", o->backend_module,
                  fmt::format("Backend whose dispositions apply, and which the worker imports when "
                              "the overloads are listed from the installed torch (default: the "
                              "newest run's; --lint: {})",
                              kDefaultBackendModule));
  return {cmd, [o] { return ledger_command(*o); }, 2};
}

}  // namespace conform
