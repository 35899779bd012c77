// neuron-conform: conformance runs of PyTorch device backends of the TorchNeuron kind.
// main() only dispatches: each command sets up its options beside its code (commands/).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Text.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  // A worker that dies while we write its next case must read as end of file (a crash, then a
  // new worker), not kill the harness.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file size limit (RLIMIT_FSIZE, a quota), a write must fail with EFBIG, which the
  // results DB reports as an error that keeps what was committed, instead of killing us.
  std::signal(SIGXFSZ, SIG_IGN);
  // Every Python process the harness starts imports the backend under test by name
  // (--backend-module); torch's autoload of every installed backend (the torch.backends entry
  // points) would let another one claim the PrivateUse1 key first. A user's own setting wins.
  ::setenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "0", /*overwrite=*/0);
  CLI::App app{
      "neuron-conform: runs PyTorch's operator suite (and more) against a device backend,\n"
      "records every case in SQLite, and reports what runs natively, falls back or fails.\n"
      "`neuron-conform suites` lists the suites it finds, with their checks and options."};
  app.set_version_flag("--version", conform::harness_version());
  app.require_subcommand(1);

  std::string python;
  app.add_option("--python", python,
                 "The Python interpreter that runs the workers (default: NEURON_CONFORM_PYTHON, "
                 "set by the installed launcher to its environment's Python)");
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + conform::shell_quote(argv[i]);

  const std::vector<conform::Command> commands = {conform::add_run_command(app, command_line),
                                                  conform::add_suites_command(app),
                                                  conform::add_merge_command(app),
                                                  conform::add_repro_command(app),
                                                  conform::add_skiplist_command(app),
                                                  conform::add_report_command(app),
                                                  conform::add_diff_command(app),
                                                  conform::add_gate_command(app),
                                                  conform::add_dashboard_command(app),
                                                  conform::add_check_model_command(app),
                                                  conform::add_ledger_command(app),
                                                  conform::add_api_compat_command(app),
                                                  conform::add_query_command(app),
                                                  conform::add_import_command(app)};
  const auto chosen = [&]() -> const conform::Command* {
    for (const auto& c : commands)
      if (c.app->parsed()) return &c;
    return nullptr;
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; bad input exits with the command's bad-input code.
    const int code = app.exit(e);
    const auto* command = chosen();
    return code == 0 ? 0 : command ? command->bad_input_exit : 2;
  }
  const auto* command = chosen();
  if (!python.empty()) ::setenv("NEURON_CONFORM_PYTHON", python.c_str(), 1);
  try {
    conform::data_root();                // an incomplete installation fails here, before any work
    conform::check_python_executable();  // as does a Python that is not there
    return command->run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "neuron-conform: error: {}\n", e.what());
    return command->bad_input_exit;
  }
}
