// `neuron-conform dashboard`: the nightly dashboard over a store's whole history.
#include "Dashboard.h"
#include "commands/Commands.h"
#include "record/Store.h"

#include <fmt/format.h>

namespace conform {

int dashboard_command(const DashboardOptions& o) {
  Store store(o.db, /*create=*/false);
  const auto model = build_dashboard(store, o.db, o.suite, o.out);
  write_dashboard(model, o.out);
  fmt::print("dashboard of {} run(s) of suite '{}': {}/index.html\n", model["runs"].size(),
             model["suite"].get<std::string>(), o.out);
  return 0;
}

Command add_dashboard_command(CLI::App& cli) {
  auto o = std::make_shared<DashboardOptions>();
  auto* cmd = cli.add_subcommand(
      "dashboard",
      "Static nightly dashboard over the DB's history: trends, per-subject history, "
      "the newest run's regressions, links to each run's report");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->capture_default_str();
  cmd->add_option("--suite", o->suite, "Suite (default: the newest run's)");
  return {cmd, [o] { return dashboard_command(*o); }, 2};
}

}  // namespace conform
