// `neuron-conform report`: the reports of one run (also written at the end of every run).
#include "Reports.h"
#include "commands/Commands.h"
#include "common/Environment.h"
#include "record/Store.h"

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

}  // namespace conform
