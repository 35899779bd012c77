// `neuron-conform import`: records runs as `query` prints them, keeping their ids: query's
// inverse, so that a run moves between DBs, and test fixtures are written, by the store's own
// writer (no one but the store knows the schema).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Files.h"
#include "record/Store.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

namespace {

using nlohmann::json;

// One document of `query`: the run's record, its "results" and its "unrecorded" cases.
void import_document(Store& store, const json& document, const std::string& file) {
  const auto bad = [&](const std::string& what) {
    return std::invalid_argument(fmt::format("{}: {}", file, what));
  };
  RunInfo run;
  try {
    run = run_from_json(document);
  } catch (const std::invalid_argument& e) {
    throw bad(fmt::format("not a run as `query` prints one: {}", e.what()));
  }
  if (!document.contains("results") || !document["results"].is_array())
    throw bad("no \"results\" list (`query --run ID` prints a run with its results)");
  std::vector<CaseResult> results;
  std::vector<CaseId> plan;
  for (std::size_t i = 0; i < document["results"].size(); ++i) {
    try {
      results.push_back(CaseResult::from_worker_json(document["results"][i]));
      plan.push_back(CaseId::parse(results.back().case_id));
    } catch (const std::exception& e) {
      throw bad(fmt::format("result {}: {}", i, e.what()));
    }
  }
  for (const auto& id : document.value("unrecorded", json::array())) {
    if (!id.is_string()) throw bad(fmt::format("unrecorded case {} is not a case id", id.dump()));
    try {
      plan.push_back(CaseId::parse(id.get<std::string>()));
    } catch (const std::exception& e) {
      throw bad(fmt::format("unrecorded case: {}", e.what()));
    }
  }
  store.import_run(run, plan, results);
  fmt::print("imported run {} ({}, {} results, {} unrecorded) from {}\n", run.id, run.suite,
             results.size(), plan.size() - results.size(), file);
}

}  // namespace

int import_command(const ImportOptions& o) {
  ensure_parent_dir(o.db);
  Store store(o.db);
  for (const auto& file : o.inputs) {
    const json document = read_json_file(file, "run document");
    if (document.is_array()) {  // several runs, oldest first
      for (const auto& run : document) import_document(store, run, file);
    } else {
      import_document(store, document, file);
    }
  }
  return 0;
}

Command add_import_command(CLI::App& cli) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = cli.add_subcommand(
      "import",
      "Record runs as `query` prints them (a run's record with its results and unrecorded cases, "
      "or a list of such), keeping their ids, status and times: query's inverse, to move a run "
      "between DBs or write a fixture. A run whose id the DB has is refused; each run is imported "
      "whole or not at all");
  cmd->add_option("inputs", o->inputs, "JSON files, each one run or a list of runs")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--db", o->db, "Results database (created if missing)")->capture_default_str();
  return {cmd, [o] { return import_command(*o); }, 2};
}

}  // namespace conform
