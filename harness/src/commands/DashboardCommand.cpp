// `neuron-conform dashboard`: the nightly dashboard over a store's whole history.
#include "commands/Commands.h"
#include "record/Store.h"
#include "report/Dashboard.h"

#include <fmt/format.h>

namespace conform {

int dashboard_command(const DashboardOptions& o) {
  Store store(o.db, /*create=*/false);
  const auto model = build_dashboard(store, o.db, o.suite, o.out);
  write_dashboard(model, o.out);
  for (const auto& section : model["suites"]) {
    const auto& h = section["headline"];
    fmt::print(
        "suite {}: {} run(s); newest {}: {} case(s) run, pass rate {}, {} new failure(s)\n",
        section["suite"].get<std::string>(), section["runs"].size(), h["run"].get<std::string>(),
        h["cases_run"].get<std::int64_t>(),
        h["pass_rate"].is_number() ? fmt::format("{:.1f}%", h["pass_rate"].get<double>()) : "-",
        h["new_failures"].get<std::size_t>());
  }
  fmt::print("dashboard of {} suite(s): {}/index.html\n", model["suites"].size(), o.out);
  return 0;
}

Command add_dashboard_command(CLI::App& cli) {
  auto o = std::make_shared<DashboardOptions>();
  auto* cmd = cli.add_subcommand(
      "dashboard",
      "Static nightly dashboard over the DB's history: the newest run of each suite at the top "
      "(pass rate, native share, new failures), then a section per suite with its trends, "
      "per-subject history, the newest run's regressions, links to each run's report");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->capture_default_str();
  cmd->add_option("--suite", o->suite, "Only this suite (default: every suite with a run)");
  return {cmd, [o] { return dashboard_command(*o); }, 2};
}

}  // namespace conform
