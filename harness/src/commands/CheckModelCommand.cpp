// `neuron-conform check-model`: will a model run on the device, and which of its ops stand in
// the way. The model's ops come from harness/worker/check_model.py (meta tensors, no download);
// the verdicts from a run of the operator suite (--suite) in the store.
#include "check/ModelCheck.h"
#include "commands/Commands.h"
#include "common/Environment.h"
#include "execute/Worker.h"
#include "record/Store.h"

#include <fmt/format.h>
#include <boost/process.hpp>

#include <filesystem>
#include <sstream>

namespace conform {

namespace bp = boost::process;

namespace {

nlohmann::json capture_model(const CheckModelOptions& o) {
  std::vector<std::string> args = {source_dir() + "/harness/worker/check_model.py",
                                   "--dtype",
                                   o.dtype,
                                   "--backend-module",
                                   o.backend_module,
                                   "--device",
                                   o.device};
  if (o.hf) args.insert(args.end(), {"--hf", *o.hf});
  if (o.script) args.insert(args.end(), {"--script", *o.script});
  if (o.exported) args.insert(args.end(), {"--exported", *o.exported});
  if (o.full_size) args.push_back("--full-size");
  if (o.train) args.push_back("--train");
  if (o.probe) args.push_back("--probe");
  if (o.compile) args.push_back("--compile");
  bp::ipstream out;
  bp::child child(bp::exe = python_executable(), bp::args = args, bp::std_out > out,
                  DiesWithParent{});
  std::ostringstream text;
  text << out.rdbuf();
  child.wait();
  const auto document = nlohmann::json::parse(text.str(), nullptr, false);
  if (document.is_discarded() || !document.is_object())
    throw std::runtime_error(fmt::format(
        "check-model: the capture helper exited {} without a result", child.exit_code()));
  if (document.contains("fatal")) throw std::invalid_argument(document["fatal"].get<std::string>());
  return document;
}

}  // namespace

int check_model_command(const CheckModelOptions& o) {
  if (static_cast<int>(o.hf.has_value()) + o.script.has_value() + o.exported.has_value() != 1)
    throw std::invalid_argument("give the model as exactly one of --hf, --script, --exported");
  if (o.json && o.markdown) throw std::invalid_argument("--json and --markdown exclude each other");
  if (!std::filesystem::exists(o.db))
    throw std::invalid_argument(fmt::format("no results database at {}", o.db));
  Store store(o.db, /*create=*/false);
  std::string run_id;
  if (o.run) {
    run_id = store.resolve_run(*o.run);
  } else {
    const auto runs = store.run_ids(o.suite);
    if (runs.empty())
      throw std::invalid_argument(
          fmt::format("{} has no run of the {} suite to judge the model's ops by", o.db, o.suite));
    run_id = runs.back();
  }
  if (const std::string suite = store.run(run_id)->suite; suite != o.suite)
    throw std::invalid_argument(
        fmt::format("run {} is of suite '{}'; check-model needs a run of the {} suite (--suite)",
                    run_id, suite, o.suite));
  const nlohmann::json result = judge_model(capture_model(o), store, run_id, o.db);
  if (o.json) {
    fmt::print("{}\n", result.dump(2));
  } else {
    fmt::print("{}", o.markdown ? model_check_markdown(result) : model_check_text(result));
  }
  return result["exit_code"].get<int>();
}

}  // namespace conform
