// `neuron-conform repro`: prints, then runs, a standalone command reproducing one case.
#include "commands/Commands.h"
#include "common/CaseId.h"
#include "common/Text.h"
#include "execute/Worker.h"
#include "record/Store.h"

#include <fmt/format.h>
#include <boost/process.hpp>

#include <filesystem>

namespace conform {

int repro_command(const ReproOptions& o) {
  const CaseId id = CaseId::parse(o.case_id);
  std::string backend = kDefaultBackendModule, device;
  std::int64_t seed = 0;
  nlohmann::json suite_options = nlohmann::json::object();
  bool blocking = o.blocking;
  nlohmann::json tolerance;  // the reviewed tolerance the run gave the case, if any
  if (std::filesystem::exists(o.db)) {
    Store store(o.db, /*create=*/false);
    const std::optional<std::string> run_id =
        o.run ? std::optional(store.resolve_run(*o.run)) : store.latest_run_with(id.str());
    if (run_id) {
      const RunInfo run = *store.run(*run_id);
      backend = run.backend_module;
      device = run.device;
      seed = run.seed;
      suite_options = run.suite_options;
      blocking = blocking || run.backend_info.value("blocking", false);
      for (const CaseResult& r : store.results(*run_id)) {
        if (r.case_id == id.str() && r.evidence.contains("tolerance_given")) {
          tolerance = r.evidence["tolerance_given"];
          tolerance.erase("applied");  // what the case did with it, not what it was given
        }
      }
    }
  } else if (o.run) {
    throw std::invalid_argument(fmt::format("--run {} given but {} does not exist", *o.run, o.db));
  }
  if (o.backend_module) backend = *o.backend_module;
  if (o.device) device = *o.device;

  WorkerCommand command = worker_command(id.suite, backend, device, seed, suite_options);
  std::vector<std::string> argv{command.python, command.script};
  argv.insert(argv.end(), command.args.begin(), command.args.end());
  if (blocking) argv.push_back("--blocking");
  if (tolerance.is_object()) argv.insert(argv.end(), {"--tolerance", tolerance.dump()});
  argv.push_back("--repro");
  argv.push_back(id.str());
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + shell_quote(word);
  fmt::print("{}\n", line);
  std::fflush(stdout);
  if (o.print_only) return 0;
  return boost::process::system(
      boost::process::exe = argv.front(),
      boost::process::args = std::vector<std::string>(argv.begin() + 1, argv.end()));
}

Command add_repro_command(CLI::App& cli) {
  auto o = std::make_shared<ReproOptions>();
  auto* cmd =
      cli.add_subcommand("repro", "Print and run a standalone command reproducing one case");
  cmd->add_option("case_id", o->case_id, "Case id, e.g. ops/add/float32/forward")->required();
  cmd->add_option("--db", o->db, "Results database (backend and device are taken from its runs)")
      ->capture_default_str();
  cmd->add_option("--run", o->run, "Run whose settings to use (id, latest, previous)");
  cmd->add_option("--backend-module", o->backend_module, "Override the backend module");
  cmd->add_option("--device", o->device, "Override the device string");
  cmd->add_flag("--print-only", o->print_only, "Only print the command");
  cmd->add_flag("--blocking", o->blocking,
                "Run every device op at its call (the backend's launch-blocking switch), so that "
                "an error the device raised late (evidence surfaced_at) is raised by its op, with "
                "the op's traceback; implied when the run was --blocking");
  return {cmd, [o] { return repro_command(*o); }, 2};
}

}  // namespace conform
