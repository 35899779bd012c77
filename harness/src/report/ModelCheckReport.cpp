#include "report/ModelCheckReport.h"

#include "common/Text.h"
#include "common/Vocabulary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <cstdint>

namespace conform {

using nlohmann::json;

namespace {

// One op's evidence in a line: the cases that decided it, the error, the skip-list entry, or why
// it is untested; for a composite op replayed on the device, what it reached first.
std::string evidence_text(const json& e, OpVerdict v) {
  std::string why;
  if (e.contains("reaches")) {
    std::string ops;
    for (const auto& [op, verdict] : e["reaches"].items())
      ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op, verdict.get<std::string>());
    why = fmt::format("on the device: {}; ", ops);
  }
  if (e.contains("not_replayed"))
    why = fmt::format("not replayed on the device ({}); ", e["not_replayed"].get<std::string>());
  switch (v) {
    case OpVerdict::kNative:
    case OpVerdict::kFallback:
    case OpVerdict::kHostOnly:
    case OpVerdict::kUnverified:
      if (!e.contains("cases")) return why + e.value("how", std::string());
      return why + fmt::format("{} case(s), e.g. {}", e["cases"].get<std::int64_t>(),
                               e.value("example", std::string()));
    case OpVerdict::kFailing:
      return why + fmt::format("{}: {}", e.value("example", std::string()),
                               e.value("message", std::string()).substr(0, 100));
    case OpVerdict::kSkipped:
      return why + fmt::format("{} ({}): {}", e.value("category", std::string()),
                               e.value("example", std::string()),
                               e.value("reason", std::string()).substr(0, 90));
    case OpVerdict::kUntested:
      return why +
             fmt::format("no case of the run; kernel: {}{}",
                         e["kernel"].is_null() ? "unknown" : e["kernel"].get<std::string>(),
                         e.contains("tested_at") ? "; tested at " + e["tested_at"].dump() : "");
  }
  return why;
}

// The eager executables a model needed (the probe's compile-cache deltas): the first question of a
// team moving a model to a device that compiles every new signature.
std::string executables_text(const json& cache) {
  const auto compiles = cache.value("compiles", std::int64_t{0});
  const auto cached = cache.value("disk_hits", std::int64_t{0});
  return fmt::format(
      "eager executables: {} needed, {} already in the backend's cache, {} compiled in {:.1f} s{}",
      compiles + cached, cached, compiles, cache.value("compile_seconds", 0.0),
      cache.contains("memory_hits") ? fmt::format(" ({} call(s) reused one in memory)",
                                                  cache["memory_hits"].get<std::int64_t>())
                                    : std::string());
}

// What compiling costs on the device at the latency the backend declares for it (its
// declared_compile_latency()): what a team plans a move by, where the run itself may have compiled
// in no time (an emulated device, a warm cache).
std::string estimate_text(const json& estimate, std::string_view what) {
  std::string out = fmt::format(
      "at the backend's declared compile latency ({:g} s + {:g} s per op), {} ~{:.0f} s",
      estimate["base_seconds"].get<double>(), estimate["per_op_seconds"].get<double>(), what,
      estimate["seconds"].get<double>());
  if (estimate.contains("cold_seconds"))
    out += fmt::format(" (~{:.0f} s with an empty cache)", estimate["cold_seconds"].get<double>());
  return out;
}

// --probe --train: the training steps' verdict, in a line.
std::string train_step_text(const json& train) {
  const std::string outcome = train.value("outcome", "?");
  if (outcome != "ran")
    return fmt::format("training step ({} autocast, AdamW): {}{}: {}", train.value("autocast", "?"),
                       outcome,
                       train.contains("stage") ? " at " + train["stage"].get<std::string>() : "",
                       train.value("message", std::string()).substr(0, 300));
  return fmt::format(
      "training step ({} autocast, clipping, AdamW {}): matched; the gradients {:.3g} off the "
      "float32 step, the CPU's own {:.3g}",
      train.value("autocast", "?"),
      fmt::join(train.value("optimizers_checked", json::array()), ", "),
      train.value("gradient_error_device", 0.0), train.value("gradient_error_cpu", 0.0));
}

// What each input shape needed, the buckets first, and the suggestion.
std::string shapes_text(const json& shapes) {
  std::string out =
      "\nshapes (the buckets first: each later shape adds what it needs beyond them):\n";
  for (const auto& row : shapes["shapes"]) {
    out +=
        fmt::format("  {:<12} bucket {:<12}", shape_text(row["shape"]), shape_text(row["bucket"]));
    if (row.contains("executables"))
      out += row["executables"].is_null()
                 ? "  executables: not reported"
                 : fmt::format("  {} new executable(s), {} from the cache, {:.1f} s compiling",
                               row["executables"].get<int>(), row.value("from_cache", 0),
                               row.value("compile_seconds", 0.0));
    if (row.contains("estimated_compile_seconds"))
      out +=
          fmt::format(" (~{:.0f} s on the device)", row["estimated_compile_seconds"].get<double>());
    if (row.contains("graphs"))
      out += fmt::format("  {} graph(s) compiled", row["graphs"].get<int>());
    if (row.contains("estimated_graph_compile_seconds"))
      out += fmt::format(" (~{:.0f} s on the device)",
                         row["estimated_graph_compile_seconds"].get<double>());
    if (row.value("outcome", "") == name(Outcome::kError))
      out += "  error: " + row.value("message", std::string());
    out += "\n";
  }
  return out + "  " + shapes["suggestion"].get<std::string>() + "\n";
}

// The placement findings in lines: the first `limit`, then how many more (the JSON has all).
std::string placement_text(const json& placement, std::size_t limit) {
  std::string out;
  const json& findings = placement["findings"];
  if (placement.contains("setup"))
    out += fmt::format("\nplacement after {}:",
                       placement["setup"].value("by", std::string("the setup")));
  else
    out += "\nplacement (static: the model's tensor attributes):";
  if (placement.contains("setup") && placement["setup"].contains("device_map"))
    out += fmt::format(" device map {}", placement["setup"]["device_map"].dump());
  out += findings.empty() ? " nothing off the device\n" : "\n";
  for (std::size_t i = 0; i < findings.size() && i < limit; ++i) {
    const json& f = findings[i];
    out += fmt::format(
        "  {}: {}{}{}{}\n", f["kind"].get<std::string>(), f["where"].get<std::string>(),
        f.contains("op")
            ? fmt::format(" ran {} x{}", f["op"].get<std::string>(), f["calls"].get<int>())
            : std::string(),
        f.contains("device") ? " on " + f["device"].get<std::string>() : std::string(),
        f.contains("fix") ? " — " + f["fix"].get<std::string>() : std::string());
  }
  if (findings.size() > limit)
    out += fmt::format("  ... {} more (--json lists all)\n", findings.size() - limit);
  return out;
}

}  // namespace

std::string model_check_text(const ModelCheckResult& r) {
  const json& m = r.model;
  std::string out = fmt::format(
      "model: {} ({}{}, {}{})\nevidence: run {} in {}\n\n",
      m.value("architecture", m.value("script", m.value("exported", "?"))),
      m["dtype"].get<std::string>(), m.value("full_size", false) ? ", full size" : "",
      m.contains("parameters") ? fmt::format("{:L} parameters", m["parameters"].get<std::int64_t>())
                               : "",
      m.value("train", false) ? ", forward and backward"
                              : (m.contains("parameters") ? ", forward" : "forward"),
      r.run_id, r.db_path);
  out += fmt::format("{:<42} {:<9} {:>6}  {:<9} {}\n", "aten op", "dtype", "calls", "verdict",
                     "evidence");
  for (const OpJudgement& o : r.ops)
    out += fmt::format("{:<42} {:<9} {:>6}  {:<9} {}\n", o.op, o.dtype, o.calls, name(o.verdict),
                       evidence_text(o.evidence, o.verdict));
  if (r.probe) {
    const json& p = *r.probe;
    out += fmt::format("\nprobe (the tiny model on the device and on the CPU): {}",
                       p.value("outcome", "?"));
    if (p.contains("max_abs_error")) {  // non-finite errors travel as "inf" or "nan"
      const json& e = p["max_abs_error"];
      out += ", max abs error " +
             (e.is_number() ? fmt::format("{:.3g}", e.get<double>()) : e.get<std::string>());
    }
    if (p.contains("message")) out += ": " + p["message"].get<std::string>().substr(0, 200);
    out += fmt::format("; {} op(s) ran natively, {} through the fallback, {} on the host\n",
                       p["native_ops"].size(), p["fallback_ops"].size(),
                       p.value("host_only_ops", json::object()).size());
    for (const auto& d : p["disagreements"])
      out +=
          fmt::format("  disagreement: {} predicted {}, observed {}\n", d["op"].get<std::string>(),
                      d["predicted"].get<std::string>(), d["observed"].get<std::string>());
    if (p.contains("first_differing_module")) {
      const json& m = p["first_differing_module"];
      out += fmt::format("  the output first differs at module {} ({})\n",
                         m["module"].get<std::string>(), m["type"].get<std::string>());
    }
    if (p["disagreements"].empty() && p.value("outcome", "") != name(Outcome::kFail))
      out += "  the probe agrees with the prediction\n";
    if (p.contains("compile_cache")) out += "  " + executables_text(p["compile_cache"]) + "\n";
    if (p.contains("compile_estimate"))
      out += "  " + estimate_text(p["compile_estimate"], "compiling them costs") + "\n";
    if (p.contains("train_step")) out += "  " + train_step_text(p["train_step"]) + "\n";
  }
  if (r.compile) {
    const json& c = *r.compile;
    out += fmt::format("\ntorch.compile (the tiny model, static shapes): {}; {} graph(s), {:.2f} s",
                       c["verdict"].get<std::string>(), c.value("graphs", 0),
                       c.value("compile_seconds", 0.0));
    if (c.contains("max_abs_error") && c["max_abs_error"].is_number())
      out +=
          fmt::format(", max abs error against the CPU {:.3g}", c["max_abs_error"].get<double>());
    out += "\n";
    // what the graphs cost on a compiling device: the backend's own counters, where it has them
    if (const json& stats = c.value("backend_compile_stats", json()); stats.is_object())
      out += fmt::format(
          "  graphs: {} given to the backend: {} lowered and compiled, {} loaded from its graph "
          "cache, {} reused in memory; {:.1f} s in the backend\n",
          stats.value("graphs_compiled", 0), stats.value("lowered", 0), stats.value("disk_hits", 0),
          stats.value("memory_hits", 0), stats.value("compile_seconds", 0.0));
    if (c.contains("compile_estimate"))
      out += "  " + estimate_text(c["compile_estimate"], "compiling the graphs costs") + "\n";
    for (const auto& reason : c.value("graph_breaks", json::array()))
      out += fmt::format("  graph break: {}\n", reason.get<std::string>());
  }
  if (r.placement) out += placement_text(*r.placement, 12);
  if (r.shapes) out += shapes_text(*r.shapes);
  out += fmt::format("\nverdict: {}\n", r.verdict);
  return out;
}

std::string model_check_markdown(const ModelCheckResult& r) {
  const json& m = r.model;
  std::string md = fmt::format("### check-model: {}\n\n**{}** (exit {})\n\n",
                               m.value("architecture", m.value("script", m.value("exported", "?"))),
                               r.verdict, r.exit_code);
  md += fmt::format("dtype {}, {}; evidence from run `{}`\n\n", m["dtype"].get<std::string>(),
                    m.value("train", false) ? "forward and backward" : "forward", r.run_id);
  md += "| aten op | dtype | calls | verdict | evidence |\n| --- | --- | ---: | --- | --- |\n";
  for (const OpJudgement& o : r.ops)
    md += fmt::format("| `{}` | {} | {} | {} | {} |\n", o.op, o.dtype, o.calls, name(o.verdict),
                      md_cell(evidence_text(o.evidence, o.verdict)));
  if (r.probe) {
    const json& p = *r.probe;
    md += fmt::format("\nProbe: {}; {} disagreement(s) with the prediction.\n",
                      p.value("outcome", "?"), p["disagreements"].size());
    if (p.contains("compile_cache")) md += "\n" + executables_text(p["compile_cache"]) + ".\n";
    if (p.contains("compile_estimate"))
      md += "\n" + estimate_text(p["compile_estimate"], "compiling them costs") + ".\n";
    for (const auto& d : p["disagreements"])
      md += fmt::format("- `{}`: predicted {}, observed {}\n", d["op"].get<std::string>(),
                        d["predicted"].get<std::string>(), d["observed"].get<std::string>());
  }
  if (r.placement && !(*r.placement)["findings"].empty()) {
    const json& findings = (*r.placement)["findings"];
    md += fmt::format("\nPlacement: {} finding(s).\n", findings.size());
    for (const auto& f : findings)
      md += fmt::format(
          "- {} `{}`{}\n", f["kind"].get<std::string>(), f["where"].get<std::string>(),
          f.contains("op") ? fmt::format(" (`{}`)", f["op"].get<std::string>()) : std::string());
  }
  if (r.compile) {
    const json& c = *r.compile;
    md += fmt::format("\ntorch.compile: {} ({} graph(s)).\n", c["verdict"].get<std::string>(),
                      c.value("graphs", 0));
    if (c.contains("compile_estimate"))
      md += "\n" + estimate_text(c["compile_estimate"], "compiling the graphs costs") + ".\n";
    for (const auto& reason : c.value("graph_breaks", json::array()))
      md += fmt::format("- graph break: {}\n", md_cell(reason.get<std::string>()));
  }
  return md;
}

json model_history_json(const std::vector<ModelCheckRecord>& records) {
  json models = json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ModelCheckRecord& r = records[i];
    const bool first = i == 0 || records[i - 1].model_key != r.model_key;
    if (first) models.push_back({{"model", r.model_key}, {"checks", json::array()}});
    models.back()["checks"].push_back(
        {{"recorded_at", r.recorded_at},
         {"model_hash", r.model_hash},
         {"torch", r.torch_version},
         {"backend", r.backend_module + " " + r.backend_version},
         {"harness_version", r.harness_version},
         {"evidence_run", r.evidence_run},
         {"exit_code", r.exit_code},
         {"verdict", r.verdict},
         {"changes", first ? json::array() : json(model_check_changes(records[i - 1], r))}});
  }
  return {{"schema", "neuron-conform/model-history"}, {"schema_version", 1}, {"models", models}};
}

std::string model_history_text(const std::vector<ModelCheckRecord>& records) {
  std::string out;
  const json history =
      model_history_json(records);  // kept: a range-for over a temporary's member dangles
  for (const auto& model : history["models"]) {
    out += fmt::format("{}\n", model["model"].get<std::string>());
    for (const auto& c : model["checks"]) {
      out +=
          fmt::format("  {}  exit {}  torch {} · {} · harness {} · run {}\n    {}\n",
                      c["recorded_at"].get<std::string>(), c["exit_code"].get<int>(),
                      c["torch"].get<std::string>(), c["backend"].get<std::string>(),
                      c["harness_version"].get<std::string>(), c["evidence_run"].get<std::string>(),
                      one_line(c["verdict"].get<std::string>(), 300));
      for (const auto& change : c["changes"])
        out += fmt::format("    changed: {}\n", change.get<std::string>());
      if (c["changes"].empty() && &c != &model["checks"].front()) out += "    changed: nothing\n";
    }
  }
  return out.empty() ? "no recorded checks (check-model --record keeps one)\n" : out;
}

}  // namespace conform
