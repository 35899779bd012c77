// `neuron-conform report`: the reports of one run (also written at the end of every run).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "record/Store.h"
#include "report/Reports.h"

#include <fmt/format.h>

namespace conform {

int report_command(const ReportOptions& o) {
  Store store(o.db, /*create=*/false);
  const std::string run_id = store.resolve_run(o.run);
  const std::string dir = o.out.value_or(run_dir(o.db, run_id));
  const auto cov = write_reports(store, run_id, o.db, dir);
  if (!o.out) point_latest(o.db, run_id);
  fmt::print(
      "{}.\nreport of run {}: {}/index.html (coverage.json, summary.md, junit.xml, ops.csv)\n",
      cov["headline"]["text"].get<std::string>(), run_id, dir);
  return 0;
}

Command add_report_command(CLI::App& cli) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = cli.add_subcommand(
      "report",
      "Write a run's reports: coverage.json, index.html, summary.md, junit.xml, ops.csv (also "
      "written at the end of every run)");
  cmd->add_option("--run", o->run, "Run (id, latest, previous)")->capture_default_str();
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--out", o->out,
                  "Directory (default: runs/<run-id>/ beside the DB, and 'latest' pointed at it)");
  return {cmd, [o] { return report_command(*o); }, 2};
}

}  // namespace conform
