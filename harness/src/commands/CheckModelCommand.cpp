// `neuron-conform check-model`: will a model run on the device, and which of its ops stand in
// the way. The model's ops come from harness/worker/check_model.py, the program that runs the
// package harness/worker/model_check/ (meta tensors, no download); the verdicts from a run of
// the operator suite (--suite) in the store.
#include "check/ModelCheck.h"
#include "commands/Commands.h"
#include "common/Environment.h"
#include "execute/Worker.h"
#include "record/ModelHistory.h"
#include "record/Store.h"
#include "report/ModelCheckReport.h"

#include <fmt/format.h>

#include <filesystem>

namespace conform {
namespace {

nlohmann::json capture_model(const CheckModelOptions& o) {
  std::vector<std::string> args = {"--dtype", o.dtype, "--backend-module", o.backend_module};
  if (!o.device.empty()) args.insert(args.end(), {"--device", o.device});
  if (o.hf) args.insert(args.end(), {"--hf", *o.hf});
  if (o.script) args.insert(args.end(), {"--script", *o.script});
  if (o.exported) args.insert(args.end(), {"--exported", *o.exported});
  if (o.full_size) args.push_back("--full-size");
  if (o.train) args.push_back("--train");
  if (o.probe) args.push_back("--probe");
  if (o.compile) args.push_back("--compile");
  if (o.device_map) args.insert(args.end(), {"--device-map", *o.device_map});
  if (o.shapes) args.insert(args.end(), {"--shapes", *o.shapes});
  if (o.seq_lens) args.insert(args.end(), {"--seq-lens", *o.seq_lens});
  if (o.batch_sizes) args.insert(args.end(), {"--batch-sizes", *o.batch_sizes});
  return run_helper("check_model.py", args);
}

}  // namespace

int check_model_command(const CheckModelOptions& o) {
  if (o.history) {  // no model is captured: the recorded verdicts only
    if (!std::filesystem::exists(o.db))
      throw std::invalid_argument(fmt::format("no results database at {}", o.db));
    Store store(o.db, /*create=*/false);
    const auto records = model_checks(store, *o.history);
    if (o.json)
      fmt::print("{}\n", model_history_json(records).dump(2));
    else
      fmt::print("{}", model_history_text(records));
    return 0;
  }
  if (static_cast<int>(o.hf.has_value()) + o.script.has_value() + o.exported.has_value() != 1)
    throw std::invalid_argument("give the model as exactly one of --hf, --script, --exported");
  if (o.json && o.markdown) throw std::invalid_argument("--json and --markdown exclude each other");
  if (!std::filesystem::exists(o.db))
    throw std::invalid_argument(fmt::format("no results database at {}", o.db));
  Store store(o.db, /*create=*/false);
  // A wrong --run fails before the capture.
  const std::optional<std::string> given_run =
      o.run ? std::optional(store.resolve_run(*o.run)) : std::nullopt;
  const nlohmann::json captured = capture_model(o);
  // Without --suite, the suite `run` runs by default, as the capture helper names it.
  const std::string suite = o.suite ? *o.suite : captured.value("default_suite", std::string());
  std::string run_id;
  if (given_run) {
    run_id = *given_run;
  } else {
    const auto runs = store.run_ids(suite);
    if (runs.empty())
      throw std::invalid_argument(
          fmt::format("{} has no run of the {} suite to judge the model's ops by", o.db, suite));
    run_id = runs.back();
  }
  if (const std::string run_suite = store.run(run_id)->suite; run_suite != suite)
    throw std::invalid_argument(
        fmt::format("run {} is of suite '{}'; check-model needs a run of the {} suite (--suite)",
                    run_id, run_suite, suite));
  const ModelCheckResult result = judge_model(captured, store, run_id, o.db);
  const nlohmann::json result_json = result;  // what --json prints and --record keeps
  if (o.record) {
    const ModelCheckRecord record =
        model_check_record(result_json, Store::now_utc(), harness_version());
    record_model_check(store, record);
    fmt::print(stderr, "recorded in {} as a check of {} (check-model --history {})\n", o.db,
               record.model_key, record.model_key);
  }
  if (o.json) {
    fmt::print("{}\n", result_json.dump(2));
  } else {
    fmt::print("{}", o.markdown ? model_check_markdown(result) : model_check_text(result));
  }
  return result.exit_code;
}

Command add_check_model_command(CLI::App& cli) {
  auto o = std::make_shared<CheckModelOptions>();
  auto* cmd = cli.add_subcommand(
      "check-model",
      "Will a model run on the device? Captures its aten ops on "
      "meta tensors and judges each by a run "
      "of the operator suite (--suite). Exit 0 runs natively, 1 runs with ops on "
      "the CPU fallback (or unproven), 2 "
      "blocked by failing ops, 3 bad input");
  cmd->add_option("--hf", o->hf,
                  "A transformers architecture or model_type (LlamaForCausalLM, llama), built tiny "
                  "from its config, nothing downloaded");
  cmd->add_option("--script", o->script,
                  "FILE.py:FUNCTION, a function returning (model, example inputs)");
  cmd->add_option("--exported", o->exported, "A program saved with torch.export.save (.pt2)");
  cmd->add_flag("--full-size", o->full_size,
                "--hf at the config's real size (on meta tensors: no memory, no download)");
  cmd->add_option("--dtype", o->dtype, "dtype of the model")->capture_default_str();
  cmd->add_flag("--train", o->train, "Include the backward pass");
  cmd->add_option("--db", o->db, "Results database")->capture_default_str();
  cmd->add_option("--run", o->run,
                  "Run of the evidence suite (id, latest, previous); default its newest");
  cmd->add_option("--suite", o->suite,
                  "Suite whose runs judge the model's ops (subjects named after aten ops); "
                  "default: the default suite of `run`");
  cmd->add_flag("--json", o->json, "Print the result as JSON (docs/check-model.md)");
  cmd->add_flag("--markdown", o->markdown, "Print the result as Markdown, for a pull request");
  cmd->add_flag("--probe", o->probe,
                "Also run the tiny model on the device and the CPU, and show where the prediction "
                "and the observation disagree");
  cmd->add_flag(
      "--compile", o->compile,
      "Also compile the tiny model with torch.compile (the backend's Dynamo backend, static "
      "shapes) and say whether it compiles into one graph: graph breaks and their reasons, an "
      "op that cannot be compiled, the compiled output against the CPU's");
  cmd->add_option("--device-map", o->device_map,
                  "With --hf --probe: place the model as transformers' device_map='auto' does "
                  "(accelerate's infer_auto_device_map), to see where it puts it on this machine")
      ->check(CLI::IsMember({"auto"}));
  cmd->add_option(
      "--shapes", o->shapes,
      "--script: input shapes to run, e.g. 2x16,2x32,2x64 (the first input tensor takes "
      "each), with --probe (eager: the backend's new executables per shape) and/or "
      "--compile (graphs per shape); suggests buckets to pad to");
  cmd->add_option("--seq-lens", o->seq_lens,
                  "--hf: sequence lengths to run, e.g. 16,32,64,128 (as --shapes)");
  cmd->add_option("--batch-sizes", o->batch_sizes,
                  "--hf: batch sizes to run with each sequence length (default 2)");
  cmd->add_flag("--record", o->record,
                "Keep the verdict in the results DB with the model's identity (its config, script "
                "or file hash) and the versions of torch, the backend and the harness");
  cmd->add_option("--history", o->history,
                  "List the recorded verdicts of the models whose key contains MODEL (all without "
                  "it; hf:LlamaForCausalLM, script:...), oldest first, with what changed")
      ->expected(0, 1)
      ->default_str("");
  cmd->add_option("--backend-module", o->backend_module, "Backend module")->capture_default_str();
  cmd->add_option("--device", o->device,
                  "Device string (default: the name the backend module gives its PrivateUse1 "
                  "device)");
  return {cmd, [o] { return check_model_command(*o); }, 3};
}

}  // namespace conform
