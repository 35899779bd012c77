// `neuron-conform query`: what the results DB holds, as JSON, for scripts, CI and the tests: the
// one reader of results outside the store, so that a schema migration changes no caller.
#include "commands/Commands.h"
#include "record/Store.h"

#include <fmt/format.h>

namespace conform {

namespace {

using nlohmann::json;

// A run's record: run_json's fields, what its backend and suite declared, the options it gave
// the suite, and how many cases it planned and recorded, by outcome.
json run_record(Store& store, const RunInfo& run) {
  json record = run_json(run);
  record["backend_info"] = run.backend_info;
  record["suite_info"] = run.suite_info;
  record["suite_options"] = run.suite_options;
  record["planned"] = store.planned_count(run.id);
  record["recorded"] = store.recorded_count(run.id);
  json outcomes = json::object();
  for (const auto& [outcome, count] : store.outcome_counts(run.id))
    outcomes[std::string(name(outcome))] = count;
  record["outcomes"] = outcomes;
  return record;
}

}  // namespace

int query_command(const QueryOptions& o) {
  Store store(o.db, /*create=*/false);
  if (o.runs) {
    json runs = json::array();
    for (const auto& id : store.run_ids()) runs.push_back(run_record(store, *store.run(id)));
    fmt::print("{}\n", runs.dump(2));
    return 0;
  }
  const std::string id = store.resolve_run(o.run);
  json record = run_record(store, *store.run(id));
  json results = json::array();
  for (const auto& r : store.results(id)) results.push_back(r.to_json());
  record["results"] = std::move(results);
  record["unrecorded"] = store.unrecorded(id);  // planned, no result yet: what `import` plans too
  fmt::print("{}\n", record.dump(2));
  return 0;
}

Command add_query_command(CLI::App& cli) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = cli.add_subcommand(
      "query",
      "A run as JSON: its record (suite, status, backend, options, counts by outcome) and every "
      "result (case, outcome, duration, evidence, native and fallback ops), in planned order, and "
      "the planned cases without one; "
      "with --runs every run's record, oldest first. What scripts read instead of the DB's "
      "schema (docs/results-db.md); `import` records it again");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--run", o->run, "The run (id, latest, previous)")->capture_default_str();
  cmd->add_flag("--runs", o->runs, "Every run's record, without results");
  return {cmd, [o] { return query_command(*o); }, 2};
}

}  // namespace conform
