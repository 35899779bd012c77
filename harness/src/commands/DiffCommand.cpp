// `neuron-conform diff A B`: what changed between two runs.
#include "commands/Commands.h"
#include "compare/Diff.h"
#include "record/Store.h"

#include <fmt/format.h>

namespace conform {

int diff_command(const DiffOptions& o) {
  if (o.format != "text" && o.format != "markdown" && o.format != "json")
    throw std::invalid_argument(fmt::format("--format {}: use text, markdown or json", o.format));
  Store store(o.db, /*create=*/false);
  const std::string a = store.resolve_run(o.a), b = store.resolve_run(o.b);
  const Diff d = diff_snapshots(snapshot_of_run(store, a), snapshot_of_run(store, b));
  if (o.format == "json") {
    fmt::print("{}\n", diff_json(d).dump(2));
  } else {
    fmt::print("{}", o.format == "markdown" ? diff_markdown(d) : diff_text(d));
  }
  return 0;
}

Command add_diff_command(CLI::App& cli) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = cli.add_subcommand(
      "diff",
      "What changed between runs A and B: new failures and passes, changed errors, new and "
      "removed cases, subject status and aten op changes");
  cmd->add_option("a", o->a, "Run A, before (id, latest, previous)")->capture_default_str();
  cmd->add_option("b", o->b, "Run B, after (id, latest, previous)")->capture_default_str();
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--format", o->format, "text, markdown or json")->capture_default_str();
  return {cmd, [o] { return diff_command(*o); }, 2};
}

}  // namespace conform
