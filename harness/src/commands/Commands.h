#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace conform {

// The backend a command targets without --backend-module: the bundled one, which every checkout
// and the test installs have; a user's backend is named (run --backend-module torch_neuronx).
inline const std::string kDefaultBackendModule = "torch_neuronsim";

struct RunOptions {
  std::string suite;
  std::string ops_regex;
  std::vector<std::string> dtypes;
  std::vector<std::string> checks;
  // --suite-option NAME=VALUE and the suite's options spelt as flags (--world-size 4): texts the
  // listing worker types and checks against the suite's declaration before any case.
  std::map<std::string, std::string> suite_options;
  int jobs = 0;  // 0: number of cores
  std::optional<std::string> shard;
  double timeout_seconds = 300;           // a case's run time
  double compile_timeout_seconds = 3600;  // the compile time given a case beside it
  std::optional<std::int64_t>
      max_worker_memory;  // bytes (given as 6G); default: default_worker_memory
  int reruns = 2;         // a failing case runs again, in a fresh worker, up to this many times
  int repeat = 1;         // every case runs this many times (to hunt flakiness on purpose)
  std::string db = "out/results.db";
  std::string backend_module = kDefaultBackendModule;
  std::string device;  // empty: the PrivateUse1 device the backend module names
  std::optional<std::string> resume;
  std::int64_t seed = 0;
  std::optional<std::string> label;
  std::vector<std::string> skiplists;  // files or directories; empty: the backend's
  bool no_skiplists = false;
  bool strict = false;
  bool blocking = false;  // every device op runs at its call (the backend's switch)
  bool warm = false;      // run for the compiles only: results to a scratch DB (run --warm)
  std::string command_line;
};

struct SuitesOptions {
  std::string backend_module = kDefaultBackendModule;
  bool json = false;
  bool nightly = false;
};

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string run = "latest";
  std::optional<std::string> label;
};

struct ReproOptions {
  std::string case_id;
  std::string db = "out/results.db";
  std::optional<std::string> run;
  std::optional<std::string> backend_module;
  std::optional<std::string> device;
  bool print_only = false;
  bool blocking = false;  // every device op at its call (also when the run was --blocking)
};

struct SkiplistOptions {
  std::string action;              // lint | stats | stale | update | export | import
  std::vector<std::string> paths;  // files or directories; empty: the backend's
  std::string db = "out/results.db";
  std::string run = "latest";
  std::string suite;  // lint's "*"; empty: the worker's default suite
  std::string backend_module = kDefaultBackendModule;
  bool check_subjects = true;  // lint: every subject must name a case of the suite
  std::string output = "out/skiplists-proposal.json";
  std::string format = "pytorch";                             // export: the only format
  std::string export_output = "out/pytorch_test_configs.py";  // export
  std::string module;                                         // import: the module to read
  std::string import_output = "out/skiplists-imported.json";  // import
};

struct ReportOptions {
  std::string run = "latest";
  std::string db = "out/results.db";
  std::optional<std::string> out;  // default: <dir of db>/runs/<run-id>, and <dir of db>/latest
};

struct DiffOptions {
  std::string a = "previous";
  std::string b = "latest";
  std::string db = "out/results.db";
  std::string format = "text";  // text | markdown | json
};

struct ImportOptions {
  std::vector<std::string> inputs;
  std::string db = "out/results.db";
};

struct QueryOptions {
  std::string db = "out/results.db";
  std::string run = "latest";
  bool runs = false;  // every run's record, no results
};

struct GateOptions {
  std::string baseline;  // a run reference, or a baseline file (*.json)
  // None: with a baseline file, the newest run of each of its suites; with a baseline run, latest.
  std::optional<std::string> run;
  std::string db = "out/results.db";
  std::optional<std::string> policy;
  std::optional<std::string>
      write_baseline;  // write a baseline file instead (one section per suite)
};

struct DashboardOptions {
  std::string db = "out/results.db";
  std::string out = "out/dashboard";
  std::optional<std::string> suite;
};

struct CheckModelOptions {
  std::optional<std::string> hf;        // architecture class or model_type
  std::optional<std::string> script;    // FILE.py:FUNCTION returning (model, inputs)
  std::optional<std::string> exported;  // a torch.export .pt2 file
  bool full_size = false;
  std::string dtype = "float32";
  bool train = false;
  std::string db = "out/results.db";
  std::optional<std::string> run;  // default: the newest run of `suite`
  // The suite whose runs are the evidence: its subjects must be named after aten ops. None: the
  // worker's default suite.
  std::optional<std::string> suite;
  bool json = false;
  bool markdown = false;
  bool probe = false;
  bool compile = false;
  std::optional<std::string> device_map;   // --hf --probe: "auto", as transformers places it
  std::optional<std::string> shapes;       // --script: 2x16,2x32 (parsed by the capture helper)
  std::optional<std::string> seq_lens;     // --hf: 16,32,64
  std::optional<std::string> batch_sizes;  // --hf: 1,2
  bool record = false;                     // keep the verdict in the DB
  std::optional<std::string> history;      // list recorded verdicts ("": every model)
  std::string backend_module = kDefaultBackendModule;
  std::string device;  // empty: the PrivateUse1 device the backend module names
};

struct LedgerOptions {
  std::string db = "out/results.db";
  std::vector<std::string> runs;  // run references; empty: the latest run of each suite
  std::optional<double> fail_under;
  std::string format = "text";              // text | json
  std::optional<std::string> dispositions;  // default: skiplists/ledger/dispositions.json
  bool summary_only = false;
  bool lint = false;  // only check the dispositions file against the installed torch
  // The backend whose dispositions apply and whose worker lists overloads if needed; default:
  // the newest given run's (--lint: the bundled backend).
  std::optional<std::string> backend_module;
};

struct ApiCompatOptions {
  std::string db = "out/results.db";
  std::vector<std::string> runs;     // run references; empty: the newest run of each suite
  std::vector<std::string> against;  // runs to compare with: entries whose status differs
  std::optional<std::string> out;    // default: <dir of db>/api-compat
};

// Each returns the process exit code; a problem with the input throws std::exception whose
// message is the one line printed to stderr.
int run_command(const RunOptions& options);
int suites_command(const SuitesOptions& options);
int merge_command(const MergeOptions& options);
int repro_command(const ReproOptions& options);
int skiplist_command(const SkiplistOptions& options);
int report_command(const ReportOptions& options);
int diff_command(const DiffOptions& options);
int gate_command(const GateOptions& options);
int dashboard_command(const DashboardOptions& options);
int check_model_command(const CheckModelOptions& options);
int ledger_command(const LedgerOptions& options);
int api_compat_command(const ApiCompatOptions& options);
int import_command(const ImportOptions& options);

// A command of the CLI: its subcommand, with the options each command's file sets up beside the
// command's code, and what runs it once parsed.
struct Command {
  CLI::App* app;
  std::function<int()> run;
  int bad_input_exit;  // 2; 3 for gate and check-model, whose 2 is a verdict
};
Command add_run_command(CLI::App& cli, const std::string& command_line);
Command add_suites_command(CLI::App& cli);
Command add_merge_command(CLI::App& cli);
Command add_repro_command(CLI::App& cli);
Command add_skiplist_command(CLI::App& cli);
Command add_report_command(CLI::App& cli);
Command add_diff_command(CLI::App& cli);
Command add_gate_command(CLI::App& cli);
Command add_dashboard_command(CLI::App& cli);
Command add_check_model_command(CLI::App& cli);
Command add_ledger_command(CLI::App& cli);
Command add_api_compat_command(CLI::App& cli);
Command add_query_command(CLI::App& cli);
Command add_import_command(CLI::App& cli);

}  // namespace conform
