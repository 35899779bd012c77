// neuron-conform: conformance runs of PyTorch device backends of the TorchNeuron kind.
#include "commands/Commands.h"
#include "common/Environment.h"
#include "common/Text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <filesystem>

int main(int argc, char** argv) {
  // A worker that dies while we write its next case must read as end of file (a crash, then a
  // new worker), not kill the harness.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "neuron-conform: runs PyTorch's operator suite (and more) against a device backend,\n"
      "records every case in SQLite, and reports what runs natively, falls back or fails."};
  app.set_version_flag("--version", conform::harness_version());
  app.require_subcommand(1);

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + conform::shell_quote(argv[i]);

  conform::RunOptions run;
  run.command_line = command_line;
  auto* run_cmd = app.add_subcommand("run", "Run a suite against a backend and record the results");
  run_cmd
      ->add_option("--suite", run.suite,
                   "Suite to run: a folder of suites/ (ops: PyTorch's OpInfo operator suite; hf: "
                   "transformers causal-LM architectures; modules: PyTorch's ModuleInfo database; "
                   "optim: its OptimizerInfo database; upstream: PyTorch's own device-generic test "
                   "files, from a checkout; compile: the OpInfos under torch.compile on the device; "
                   "distributed: collectives, DDP, FSDP2 and DTensor "
                   "across a world of rank processes; aten: the aten overloads no OpInfo reaches; "
                   "sizes: model-relevant ops at tile-boundary and model-derived sizes) "
                   "or of a folder in NEURON_CONFORM_SUITES "
                   "(suites/README.md says how to write one)")
      ->capture_default_str();
  run_cmd->add_option("--ops", run.ops_regex,
                      "Regular expression searched in the case subject (OpInfo name[.variant], or "
                      "architecture class for hf, file.GenericClass for upstream, collective or API for "
                      "distributed); "
                      "'^(add|mul)$' selects exactly those two");
  run_cmd
      ->add_option("--dtypes", run.dtypes,
                   "Comma-separated dtypes (default: each op's CPU dtypes; hf: float32,bfloat16)")
      ->delimiter(',');
  run_cmd
      ->add_option("--checks", run.checks,
                   "Comma-separated checks, as the suite declares them (its report lists them): ops "
                   "forward,out,inplace,backward,forward_ad,extremal,layout,errors,gradgrad,random,"
                   "autocast,sdpa; hf forward,generate,backward,static_shapes,compiled_forward; "
                   "compile forward,backward,recompile; distributed world<N>; modules forward,"
                   "backward,noncontiguous,state,save_load; optim step,lr_scheduler,state_dict,"
                   "load_state_dict; aten out,inplace,scalar,direct; sizes tile128,tile512,tile2048,"
                   "tile4096,tile8192,seq1,seq128,seq2048; "
                   "upstream: the tests' generic names (test_view_as_real), and import")
      ->delimiter(',');
  run_cmd->add_option("-j,--jobs", run.jobs, "Worker processes (default: number of cores)");
  run_cmd->add_option("--shard", run.shard,
                      "Run shard K of N (K/N, 1-based), balanced by recorded durations");
  run_cmd->add_option("--timeout", run.timeout_seconds, "Per-case time limit in seconds")
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--reruns", run.reruns,
          "Run a case that failed (fail, error, crash, timeout) again, each time in a fresh "
          "worker, up to N times; a pass on a rerun records it as flaky, never as a pass. "
          "0 turns reruns off. Cases a skip list expects to fail are not rerun, unless "
          "their entry's category is flaky")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_cmd
      ->add_option("--repeat", run.repeat,
                   "Run every case N times in its worker, to hunt flakiness on purpose: outcomes "
                   "that differ make the case flaky")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--db", run.db, "Results database")->capture_default_str();
  run_cmd
      ->add_option("--backend-module", run.backend_module,
                   "Python module of the backend under test")
      ->capture_default_str();
  run_cmd->add_option("--device", run.device, "Device string of the backend")
      ->capture_default_str();
  run_cmd->add_option("--resume", run.resume,
                      "Run only what this run (id, latest, previous) has not recorded");
  run_cmd->add_option("--seed", run.seed, "Random seed for sample inputs")->capture_default_str();
  run_cmd->add_option("--label", run.label,
                      "Free text stored with the run (e.g. nightly, PR number)");
  run_cmd->add_option("--skiplists", run.skiplists,
                      "Skip-list files or directories (default: skiplists/)");
  run_cmd->add_flag("--no-skiplists", run.no_skiplists,
                    "Use no skip lists: run and report every case as observed");
  run_cmd
      ->add_option_function<std::string>(
          "--pytorch-test-dir",
          [&run](const std::string& dir) {
            run.suite_options["pytorch_test_dir"] = std::filesystem::absolute(dir).string();
          },
          "upstream suite: a PyTorch checkout (or its test/ folder) at the installed torch's "
          "tag; ci/fetch-pytorch-tests.sh makes one")
      ->check(CLI::ExistingDirectory);
  run_cmd->add_option_function<std::vector<std::string>>(
      "--test-files",
      [&run](const std::vector<std::string>& files) {
        run.suite_options["test_files"] = fmt::format("{}", fmt::join(files, ","));
      },
      "upstream suite: comma-separated files of test/ to run (test_view_ops.py,test_torch.py); "
      "default: every file that calls instantiate_device_type_tests")
      ->delimiter(',');
  run_cmd
      ->add_option_function<int>(
          "--world-size",
          [&run](int size) { run.suite_options["world_size"] = std::to_string(size); },
          "distributed suite: ranks per world, one process and one device each (default 2; at "
          "most the backend's device count)")
      ->check(CLI::Range(2, 64).description("2 to 64 (and at most the device count)"));
  run_cmd
      ->add_option_function<std::vector<std::string>>(
          "--suite-option",
          [&run](const std::vector<std::string>& pairs) {
            for (const auto& pair : pairs) {
              const auto eq = pair.find('=');
              if (eq == std::string::npos || eq == 0)
                throw CLI::ValidationError("--suite-option", "expects NAME=VALUE, got '" + pair + "'");
              run.suite_options[pair.substr(0, eq)] = pair.substr(eq + 1);
            }
          },
          "NAME=VALUE handed to the suite's configure() (repeatable); the suite names the options "
          "it takes and refuses others before any case (e.g. sizes: max_case_memory=2GiB)")
      ->allow_extra_args(false);
  run_cmd->add_flag(
      "--strict", run.strict,
      "Exit 1 when a case passes although a skip list expects it to fail (xpass), or fails "
      "differently from its entry's 'expect'");

  conform::MergeOptions merge;
  auto* merge_cmd =
      app.add_subcommand("merge", "Combine the shard DBs of one sharded run into one run");
  merge_cmd->add_option("inputs", merge.inputs, "Shard databases")->required();
  merge_cmd->add_option("-o,--output,--db", merge.output, "Output database")->required();
  merge_cmd->add_option("--run", merge.run, "Run to take from each input (id, latest, previous)")
      ->capture_default_str();
  merge_cmd->add_option("--label", merge.label,
                        "Label of the merged run (default: the first input's)");

  conform::ReproOptions repro;
  auto* repro_cmd =
      app.add_subcommand("repro", "Print and run a standalone command reproducing one case");
  repro_cmd->add_option("case_id", repro.case_id, "Case id, e.g. ops/add/float32/forward")
      ->required();
  repro_cmd
      ->add_option("--db", repro.db,
                   "Results database (backend and device are taken from its runs)")
      ->capture_default_str();
  repro_cmd->add_option("--run", repro.run, "Run whose settings to use (id, latest, previous)");
  repro_cmd->add_option("--backend-module", repro.backend_module, "Override the backend module");
  repro_cmd->add_option("--device", repro.device, "Override the device string");
  repro_cmd->add_flag("--print-only", repro.print_only, "Only print the command");

  conform::SkiplistOptions skiplist;
  auto* skiplist_cmd = app.add_subcommand("skiplist", "Check and maintain skip lists");
  skiplist_cmd->require_subcommand(1);
  auto add_paths = [&](CLI::App* sub) {
    sub->add_option("paths", skiplist.paths,
                    "Skip-list files or directories (default: skiplists/)");
  };
  auto add_run = [&](CLI::App* sub) {
    sub->add_option("--db", skiplist.db, "Results database")->capture_default_str();
    sub->add_option("--run", skiplist.run, "Run (id, latest, previous)")->capture_default_str();
  };
  auto* lint_cmd = skiplist_cmd->add_subcommand(
      "lint",
      "Report JSON errors (file:line:column), unknown fields, missing reasons, unknown categories, "
      "subjects "
      "that name no case of the installed suite, duplicate and shadowed entries; exit 1 on any");
  add_paths(lint_cmd);
  lint_cmd->add_option("--suite", skiplist.suite, "Suite whose subjects entries must name")
      ->capture_default_str();
  lint_cmd
      ->add_option("--backend-module", skiplist.backend_module,
                   "Backend the listing worker imports")
      ->capture_default_str();
  lint_cmd->add_flag("!--no-subject-check", skiplist.check_subjects,
                     "Skip checking subjects against the suite");
  auto* stats_cmd = skiplist_cmd->add_subcommand(
      "stats", "Entries and the run's decided cases by category and mode");
  add_paths(stats_cmd);
  add_run(stats_cmd);
  auto* stale_cmd = skiplist_cmd->add_subcommand(
      "stale", "Entries whose cases all passed (xpass) or that matched nothing");
  add_paths(stale_cmd);
  add_run(stale_cmd);
  auto* update_cmd =
      skiplist_cmd->add_subcommand("update",
                                   "Write a proposal (remove stale entries, add entries for new "
                                   "failures) for review; edits nothing");
  add_paths(update_cmd);
  add_run(update_cmd);
  update_cmd->add_option("-o,--output", skiplist.output, "Proposal file")->capture_default_str();
  for (auto* sub : {lint_cmd, stats_cmd, stale_cmd, update_cmd}) {
    sub->callback([&skiplist, sub] { skiplist.action = sub->get_name(); });
  }

  conform::ReportOptions report;
  auto* report_cmd = app.add_subcommand(
      "report",
      "Write a run's reports: coverage.json, index.html, summary.md, junit.xml, ops.csv (also "
      "written at the end of every run)");
  report_cmd->add_option("--run", report.run, "Run (id, latest, previous)")->capture_default_str();
  report_cmd->add_option("--db", report.db, "Results database")->capture_default_str();
  report_cmd->add_option(
      "--out", report.out,
      "Directory (default: runs/<run-id>/ beside the DB, and 'latest' pointed at it)");

  conform::DiffOptions diff;
  auto* diff_cmd = app.add_subcommand(
      "diff",
      "What changed between runs A and B: new failures and passes, changed errors, new and "
      "removed cases, subject status and aten op changes");
  diff_cmd->add_option("a", diff.a, "Run A, before (id, latest, previous)")->capture_default_str();
  diff_cmd->add_option("b", diff.b, "Run B, after (id, latest, previous)")->capture_default_str();
  diff_cmd->add_option("--db", diff.db, "Results database")->capture_default_str();
  diff_cmd->add_option("--format", diff.format, "text, markdown or json")->capture_default_str();

  conform::GateOptions gate;
  auto* gate_cmd = app.add_subcommand(
      "gate",
      "Release gate of a run against a baseline. Exit 0 pass, 1 regressions, 2 only "
      "unacknowledged improvements, 3 bad input; prints a Markdown verdict");
  gate_cmd->add_option(
      "--baseline", gate.baseline,
      "Baseline: a run (id, latest, previous) or a file written by --write-baseline");
  gate_cmd->add_option("--run", gate.run, "Run to judge (id, latest, previous)")
      ->capture_default_str();
  gate_cmd->add_option("--db", gate.db, "Results database")->capture_default_str();
  gate_cmd->add_option("--policy", gate.policy,
                       "Policy file (JSON); default: any regression, crash, native op lost or new "
                       "fallback op fails, and improvements must be in the baseline");
  gate_cmd->add_option("--write-baseline", gate.write_baseline,
                       "Write the run as a baseline file (e.g. ci/baseline.json) and exit");

  conform::DashboardOptions dashboard;
  auto* dashboard_cmd = app.add_subcommand(
      "dashboard",
      "Static nightly dashboard over the DB's history: trends, per-subject history, "
      "the newest run's regressions, links to each run's report");
  dashboard_cmd->add_option("--db", dashboard.db, "Results database")->capture_default_str();
  dashboard_cmd->add_option("--out", dashboard.out, "Output directory")->capture_default_str();
  dashboard_cmd->add_option("--suite", dashboard.suite, "Suite (default: the newest run's)");

  conform::CheckModelOptions check;
  auto* check_cmd = app.add_subcommand(
      "check-model",
      "Will a model run on the device? Captures its aten ops on "
      "meta tensors and judges each by a run "
      "of the operator suite (--suite). Exit 0 runs natively, 1 runs with ops on "
      "the CPU fallback (or unproven), 2 "
      "blocked by failing ops, 3 bad input");
  check_cmd->add_option(
      "--hf", check.hf,
      "A transformers architecture or model_type (LlamaForCausalLM, llama), built tiny "
      "from its config, nothing downloaded");
  check_cmd->add_option("--script", check.script,
                        "FILE.py:FUNCTION, a function returning (model, example inputs)");
  check_cmd->add_option("--exported", check.exported,
                        "A program saved with torch.export.save (.pt2)");
  check_cmd->add_flag("--full-size", check.full_size,
                      "--hf at the config's real size (on meta tensors: no memory, no download)");
  check_cmd->add_option("--dtype", check.dtype, "dtype of the model")->capture_default_str();
  check_cmd->add_flag("--train", check.train, "Include the backward pass");
  check_cmd->add_option("--db", check.db, "Results database")->capture_default_str();
  check_cmd->add_option("--run", check.run,
                        "Run of the evidence suite (id, latest, previous); default its newest");
  check_cmd
      ->add_option("--suite", check.suite,
                   "Suite whose runs judge the model's ops (subjects named after aten ops)")
      ->capture_default_str();
  check_cmd->add_flag("--json", check.json, "Print the result as JSON (docs/check-model.md)");
  check_cmd->add_flag("--markdown", check.markdown,
                      "Print the result as Markdown, for a pull request");
  check_cmd->add_flag(
      "--probe", check.probe,
      "Also run the tiny model on the device and the CPU, and show where the prediction "
      "and the observation disagree");
  check_cmd->add_flag(
      "--compile", check.compile,
      "Also compile the tiny model with torch.compile (the backend's Dynamo backend, static "
      "shapes) and say whether it compiles into one graph: graph breaks and their reasons, an "
      "op that cannot be compiled, the compiled output against the CPU's");
  check_cmd->add_option("--backend-module", check.backend_module, "Backend module")
      ->capture_default_str();
  check_cmd->add_option("--device", check.device, "Device string")->capture_default_str();

  conform::LedgerOptions ledger;
  auto* ledger_cmd = app.add_subcommand(
      "ledger",
      "Every aten overload of torch with a CPU kernel: reached at the device by the runs (native "
      "or fallback, with a case that did), disposed of by skiplists/ledger/dispositions.json "
      "(not_applicable, unreached, with a reason), served by a composite kernel on the device "
      "(the backend has none of its own; found in the dispatcher), or unreached with no "
      "disposition. Coverage = reached / (all - not_applicable - composite). Exit 0, 1 below "
      "--fail-under, 2 bad input (docs/ledger.md)");
  ledger_cmd->add_option("--db", ledger.db, "Results database")->capture_default_str();
  ledger_cmd
      ->add_option("--runs", ledger.runs,
                   "Comma-separated runs (id, latest, previous) whose op events count; default: "
                   "the latest run of each suite in the DB")
      ->delimiter(',');
  ledger_cmd
      ->add_option("--fail-under", ledger.fail_under,
                   "Exit 1 when the coverage is below this percentage (for CI)")
      ->check(CLI::Range(0.0, 100.0));
  ledger_cmd
      ->add_option("--format", ledger.format,
                   "text (a line per overload, then the summary) or json (counts and rows)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  ledger_cmd->add_flag("--summary", ledger.summary_only,
                       "text: only the summary (numbers, unreached kinds and families)");
  ledger_cmd->add_option("--dispositions", ledger.dispositions,
                         "Dispositions file (default: skiplists/ledger/dispositions.json)");
  ledger_cmd->add_flag("--lint", ledger.lint,
                       "Only check the dispositions file against the installed torch (unknown "
                       "overloads, missing reasons, duplicates); exit 1 on any problem");
  ledger_cmd
      ->add_option("--backend-module", ledger.backend_module,
                   "Backend the worker imports when the overloads are listed from the installed "
                   "torch (--lint, runs recorded before the ledger)")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; bad input exits as any bad input does: 2, or 3 for the
    // commands whose 2 is a verdict.
    const int code = app.exit(e);
    return code == 0 ? 0 : (*gate_cmd || *check_cmd) ? 3 : 2;
  }
  try {
    if (*run_cmd) return conform::run_command(run);
    if (*merge_cmd) return conform::merge_command(merge);
    if (*repro_cmd) return conform::repro_command(repro);
    if (*skiplist_cmd) return conform::skiplist_command(skiplist);
    if (*report_cmd) return conform::report_command(report);
    if (*diff_cmd) return conform::diff_command(diff);
    if (*gate_cmd) return conform::gate_command(gate);
    if (*dashboard_cmd) return conform::dashboard_command(dashboard);
    if (*check_cmd) return conform::check_model_command(check);
    if (*ledger_cmd) return conform::ledger_command(ledger);
  } catch (const std::exception& e) {
    fmt::print(stderr, "neuron-conform: error: {}\n", e.what());
    // gate's and check-model's 2 are verdicts ("only unacknowledged improvements", "blocked")
    return *gate_cmd || *check_cmd ? 3 : 2;
  }
  return 0;
}
