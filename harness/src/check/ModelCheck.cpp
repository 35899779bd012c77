#include "check/ModelCheck.h"

#include "common/Text.h"
#include "common/CaseId.h"
#include "common/Result.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace conform {

using nlohmann::json;

namespace {

// What the run says about one aten op at one dtype.
struct Evidence {
  std::vector<std::string> native, fallback;                 // matched cases, by route
  std::vector<std::pair<std::string, std::string>> failing;  // case, message naming the op
};

struct RunEvidence {
  std::map<std::string, std::map<std::string, Evidence>> ops;  // op -> dtype -> evidence
  // OpInfo subject -> dtype -> its cases: case id, outcome, evidence
  struct Case {
    std::string id;
    Outcome outcome;
    json evidence;
  };
  std::map<std::string, std::map<std::string, std::vector<Case>>> subjects;
  std::set<std::string> dtypes_seen;
};

RunEvidence index_run(Store& store, const std::string& run_id) {
  RunEvidence ev;
  for (const CaseResult& r : store.results(run_id)) {
    const CaseId id = CaseId::parse(r.case_id);
    ev.dtypes_seen.insert(id.dtype);
    if (is_success(r.outcome)) {
      for (const auto& [op, _] : r.native_ops) ev.ops[op][id.dtype].native.push_back(r.case_id);
      for (const auto& [op, _] : r.fallback_ops) ev.ops[op][id.dtype].fallback.push_back(r.case_id);
    }
    // The worker records the op an error names (harness/worker/evidence.py).
    if ((r.outcome == Outcome::kError || r.outcome == Outcome::kXfail) &&
        r.evidence.contains("failing_op")) {
      ev.ops[r.evidence["failing_op"]][id.dtype].failing.emplace_back(
          r.case_id, r.evidence.value("message", std::string()).substr(0, 300));
    }
    ev.subjects[id.subject][id.dtype].push_back({r.case_id, r.outcome, r.evidence});
  }
  return ev;
}

// "aten::add.Tensor" -> "add": the OpInfo that most likely tests it.
std::string base_name(const std::string& op) {
  std::string name = op.substr(op.find("::") + 2);
  name = name.substr(0, name.find('.'));
  while (!name.empty() && name.front() == '_') name.erase(0, 1);
  return name;
}

// "aten::lgamma.out" -> "aten::lgamma": overloads share a kernel family.
std::string op_family(const std::string& op) {
  return op.substr(0, op.find('.', op.find("::")));
}

json verdict_from(const Evidence& e, const char* how) {
  if (!e.native.empty())
    return {{"verdict", OpVerdict::kNative},
            {"cases", e.native.size()},
            {"example", e.native.front()},
            {"failing_cases", e.failing.size()},
            {"how", how}};
  if (!e.fallback.empty())
    return {{"verdict", OpVerdict::kFallback},
            {"cases", e.fallback.size()},
            {"example", e.fallback.front()},
            {"how", how}};
  if (!e.failing.empty())
    return {{"verdict", OpVerdict::kFailing},
            {"cases", e.failing.size()},
            {"example", e.failing.front().first},
            {"message", e.failing.front().second},
            {"how", how}};
  return nullptr;
}

json verdict_of(const RunEvidence& ev, const std::string& op, const std::string& dtype,
                const json& kernel) {
  // 1. The op itself at this dtype; 2. its other overloads (a functional op runs as its .out).
  Evidence exact, family;
  for (const auto& [name, by_dtype] : ev.ops) {
    auto d = by_dtype.find(dtype);
    if (d == by_dtype.end() || op_family(name) != op_family(op)) continue;
    Evidence& into = name == op ? exact : family;
    into.native.insert(into.native.end(), d->second.native.begin(), d->second.native.end());
    into.fallback.insert(into.fallback.end(), d->second.fallback.begin(), d->second.fallback.end());
    into.failing.insert(into.failing.end(), d->second.failing.begin(), d->second.failing.end());
  }
  if (json v = verdict_from(exact, "the op ran in the run's cases"); !v.is_null()) return v;
  if (json v = verdict_from(family, "another overload of the op ran in the run's cases");
      !v.is_null())
    return v;
  // No tracked event at this dtype: ops that are not compiled (views, factories) are not tracked
  // when they run natively, but a fallback always is. So the OpInfo named after the op decides.
  if (auto s = ev.subjects.find(base_name(op)); s != ev.subjects.end()) {
    if (auto d = s->second.find(dtype); d != s->second.end()) {
      const auto& cases = d->second;
      for (const auto& c : cases) {
        if (is_success(c.outcome))
          return {{"verdict", OpVerdict::kNative},
                  {"cases", cases.size()},
                  {"example", c.id},
                  {"how",
                   "its OpInfo matched on the device and the op never went through the fallback"}};
      }
      for (const auto& c : cases) {
        if (is_failure(c.outcome))
          return {{"verdict", OpVerdict::kFailing},
                  {"cases", cases.size()},
                  {"example", c.id},
                  {"message",
                   c.evidence.value("message", std::string(name(c.outcome))).substr(0, 300)}};
      }
      const json entry = cases.front().evidence.value("skiplist", json::object());
      return {{"verdict", OpVerdict::kSkipped},
              {"example", cases.front().id},
              {"category", entry.value("category", "")},
              {"reason", entry.value("reason", "")},
              {"entry", entry.value("entry", "")}};
    }
  }
  json untested = {{"verdict", OpVerdict::kUntested}, {"kernel", kernel}};
  std::vector<std::string> other;
  if (auto o = ev.ops.find(op); o != ev.ops.end())
    for (const auto& [d, _] : o->second) other.push_back(d);
  if (!other.empty()) untested["tested_at"] = other;
  return untested;
}

OpVerdict verdict_in(const json& v) { return v["verdict"].get<OpVerdict>(); }
bool is_kernel(const json& kernel, Kernel k) { return kernel == name(k); }

}  // namespace

json judge_model(const json& capture, Store& store, const std::string& run_id,
                 const std::string& db_path) {
  const RunEvidence ev = index_run(store, run_id);
  const std::string model_dtype = capture["model"].value("dtype", "float32");
  json ops = json::array();
  std::set<std::string> failing, fallback, untested_fallback, skipped, views;
  for (const auto& use : capture["ops"]) {
    const std::string op = use["op"];
    std::vector<std::string> dtypes = use["dtypes"].get<std::vector<std::string>>();
    if (dtypes.empty())
      dtypes.push_back(model_dtype);  // factory ops (ones, arange) make the model's dtype
    // Kernel: on the device's dispatch key, a composite of other ops, or none (the CPU fallback).
    const json kernel = use["device_kernel"];
    for (const auto& dtype : dtypes) {
      json v = verdict_of(ev, op, dtype, kernel);
      const OpVerdict verdict = verdict_in(v);
      if (verdict == OpVerdict::kFailing) failing.insert(op);
      if (verdict == OpVerdict::kFallback) fallback.insert(op);
      if (verdict == OpVerdict::kSkipped) skipped.insert(op);
      if (verdict == OpVerdict::kUntested && is_kernel(kernel, Kernel::kFallback))
        untested_fallback.insert(op);
      if (verdict == OpVerdict::kUntested && is_kernel(kernel, Kernel::kView)) views.insert(op);
      ops.push_back({{"op", op},
                     {"dtype", dtype},
                     {"calls", use["calls"]},
                     {"phases", use["phases"]},
                     {"kernel", kernel},
                     {"evidence", v},
                     {"verdict", verdict}});
    }
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const json& a, const json& b) { return verdict_in(a) < verdict_in(b); });
  const auto list = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& op : s) out += (out.empty() ? "" : ", ") + op;
    return out;
  };
  // An untested op proves nothing: a device kernel is a claim of the backend, and a composite
  // kernel runs as other ops the capture does not see (convolution reaches
  // convolution_overrideable). Only views, which every backend shares, need no evidence.
  std::set<std::string> on_cpu = fallback, unproven;
  on_cpu.insert(untested_fallback.begin(), untested_fallback.end());
  on_cpu.insert(skipped.begin(), skipped.end());
  for (const auto& o : ops)
    if (verdict_in(o) == OpVerdict::kUntested && !is_kernel(o["kernel"], Kernel::kView) &&
        !is_kernel(o["kernel"], Kernel::kFallback))
      unproven.insert(o["op"]);
  int exit_code = 0;
  std::string verdict;
  if (!failing.empty()) {
    exit_code = 2;
    verdict = fmt::format("blocked by {}", list(failing));
  } else if (!on_cpu.empty() || !unproven.empty()) {
    exit_code = 1;
    std::vector<std::string> parts;
    if (!on_cpu.empty())
      parts.push_back(
          fmt::format("runs with {} op(s) on the CPU fallback: {}", on_cpu.size(), list(on_cpu)));
    if (!unproven.empty())
      parts.push_back(fmt::format("{} op(s) the run never tested: {} (--probe runs the model)",
                                  unproven.size(), list(unproven)));
    verdict = parts.size() == 2 ? parts[0] + "; " + parts[1] : parts[0];
  } else {
    verdict = "runs natively";
  }
  json result = {{"schema", "neuron-conform/check-model"},
                 {"schema_version", 1},
                 {"model", capture["model"]},
                 {"run", {{"id", run_id}, {"db", db_path}}},
                 {"verdict", verdict},
                 {"exit_code", exit_code},
                 {"counts",
                  {{"ops", capture["ops"].size()},
                   {name(OpVerdict::kFailing), failing.size()},
                   {name(OpVerdict::kFallback), fallback.size()},
                   {name(OpVerdict::kSkipped), skipped.size()},
                   {"untested_fallback", untested_fallback.size()},
                   {"untested_unproven", unproven.size()},
                   {"untested_views", views.size()}}},
                 {"ops", ops},
                 {"capture_seconds", capture.value("capture_seconds", 0.0)}};
  if (capture.contains("probe")) {
    const json& probe = capture["probe"];
    json disagreements = json::array();
    // The route each captured op is predicted to take at the model's dtype: native, fallback,
    // or failing (it should not run). An observed op is matched exactly, else by its family.
    std::map<std::string, std::string> predicted;
    for (const auto& o : ops) {
      // A failing op should not run at all; skipped ops would run on the CPU; untested ones as
      // their kernel says.
      const OpVerdict v = verdict_in(o);
      std::string p(name(Route::kFallback));
      if (v == OpVerdict::kFailing) {
        p = name(OpVerdict::kFailing);
      } else if (v == OpVerdict::kNative ||
                 (v == OpVerdict::kUntested && !is_kernel(o["kernel"], Kernel::kFallback))) {
        p = name(Route::kNative);
      }
      if (o["dtype"] == model_dtype || !predicted.contains(o["op"])) predicted[o["op"]] = p;
    }
    auto prediction = [&](const std::string& op) -> std::string {
      if (auto it = predicted.find(op); it != predicted.end()) return it->second;
      for (const auto& [name, route] : predicted)
        if (op_family(name) == op_family(op)) return route;
      return "not captured";
    };
    auto check = [&](const std::string& op, const std::string& actual) {
      const std::string p = prediction(op);
      if (p != actual && p != "not captured")
        disagreements.push_back({{"op", op}, {"predicted", p}, {"observed", actual}});
    };
    const json ran_native = probe.value("native_ops", json::object());
    const json ran_fallback = probe.value("fallback_ops", json::object());
    for (const auto& [op, _] : ran_native.items()) check(op, std::string(name(Route::kNative)));
    for (const auto& [op, _] : ran_fallback.items())
      check(op, std::string(name(Route::kFallback)));
    const std::string message = probe.value("message", std::string());
    for (const auto& op : failing) {
      if (probe.value("outcome", "") == "ran" && message.find(op) == std::string::npos)
        disagreements.push_back(
            {{"op", op}, {"predicted", name(OpVerdict::kFailing)}, {"observed", "the model ran"}});
    }
    // What the probe saw outweighs what the store predicted: a model that failed is blocked.
    if (probe.value("outcome", "") == name(Outcome::kError) && failing.empty()) {
      const std::string culprit = probe.value("failing_op", std::string("the model"));
      disagreements.push_back(
          {{"op", culprit}, {"predicted", prediction(culprit)}, {"observed", "failed"}});
      result["exit_code"] = 2;
      result["verdict"] =
          fmt::format("blocked: the probe failed in {} ({}); predicted: {}", culprit,
                      message.substr(0, 120), result["verdict"].get<std::string>());
    }
    result["probe"] = probe;
    result["probe"]["disagreements"] = disagreements;
  }
  return result;
}

std::string model_check_text(const json& r) {
  const json& m = r["model"];
  std::string out = fmt::format(
      "model: {} ({}{}, {}{})\nevidence: run {} in {}\n\n",
      m.value("architecture", m.value("script", m.value("exported", "?"))),
      m["dtype"].get<std::string>(), m.value("full_size", false) ? ", full size" : "",
      m.contains("parameters") ? fmt::format("{:L} parameters", m["parameters"].get<std::int64_t>())
                               : "",
      m.value("train", false) ? ", forward and backward"
                              : (m.contains("parameters") ? ", forward" : "forward"),
      r["run"]["id"].get<std::string>(), r["run"]["db"].get<std::string>());
  out += fmt::format("{:<42} {:<9} {:>6}  {:<9} {}\n", "aten op", "dtype", "calls", "verdict",
                     "evidence");
  for (const auto& o : r["ops"]) {
    const json& e = o["evidence"];
    std::string why;
    const OpVerdict v = verdict_in(o);
    if (v == OpVerdict::kNative || v == OpVerdict::kFallback)
      why = fmt::format("{} case(s), e.g. {}", e["cases"].get<std::int64_t>(),
                        e["example"].get<std::string>());
    if (v == OpVerdict::kFailing)
      why = fmt::format("{}: {}", e["example"].get<std::string>(),
                        e["message"].get<std::string>().substr(0, 100));
    if (v == OpVerdict::kSkipped)
      why = fmt::format("{} ({}): {}", e["category"].get<std::string>(),
                        e["example"].get<std::string>(),
                        e["reason"].get<std::string>().substr(0, 90));
    if (v == OpVerdict::kUntested)
      why = fmt::format("no case of the run; kernel: {}{}",
                        e["kernel"].is_null() ? "unknown" : e["kernel"].get<std::string>(),
                        e.contains("tested_at") ? "; tested at " + e["tested_at"].dump() : "");
    out += fmt::format("{:<42} {:<9} {:>6}  {:<9} {}\n", o["op"].get<std::string>(),
                       o["dtype"].get<std::string>(), o["calls"].get<std::int64_t>(), name(v), why);
  }
  if (r.contains("probe")) {
    const json& p = r["probe"];
    out += fmt::format("\nprobe (the tiny model on the device and on the CPU): {}",
                       p.value("outcome", "?"));
    if (p.contains("max_abs_error")) {  // non-finite errors travel as "inf" or "nan"
      const json& e = p["max_abs_error"];
      out += ", max abs error " +
             (e.is_number() ? fmt::format("{:.3g}", e.get<double>()) : e.get<std::string>());
    }
    if (p.contains("message")) out += ": " + p["message"].get<std::string>().substr(0, 200);
    out += fmt::format("; {} op(s) ran natively, {} through the fallback\n", p["native_ops"].size(),
                       p["fallback_ops"].size());
    for (const auto& d : p["disagreements"])
      out +=
          fmt::format("  disagreement: {} predicted {}, observed {}\n", d["op"].get<std::string>(),
                      d["predicted"].get<std::string>(), d["observed"].get<std::string>());
    if (p["disagreements"].empty()) out += "  the probe agrees with the prediction\n";
  }
  out += fmt::format("\nverdict: {}\n", r["verdict"].get<std::string>());
  return out;
}

std::string model_check_markdown(const json& r) {
  const json& m = r["model"];
  std::string md = fmt::format("### check-model: {}\n\n**{}** (exit {})\n\n",
                               m.value("architecture", m.value("script", m.value("exported", "?"))),
                               r["verdict"].get<std::string>(), r["exit_code"].get<int>());
  md += fmt::format("dtype {}, {}; evidence from run `{}`\n\n", m["dtype"].get<std::string>(),
                    m.value("train", false) ? "forward and backward" : "forward",
                    r["run"]["id"].get<std::string>());
  md += "| aten op | dtype | calls | verdict | evidence |\n| --- | --- | ---: | --- | --- |\n";
  for (const auto& o : r["ops"]) {
    const json& e = o["evidence"];
    std::string why = e.value("example", std::string());
    if (verdict_in(o) == OpVerdict::kFailing) why += ": " + e.value("message", std::string());
    if (verdict_in(o) == OpVerdict::kSkipped)
      why = e.value("category", std::string()) + ": " + e.value("reason", std::string());
    if (verdict_in(o) == OpVerdict::kUntested)
      why = "kernel: " +
            (e["kernel"].is_null() ? std::string("unknown") : e["kernel"].get<std::string>());
    md += fmt::format("| `{}` | {} | {} | {} | {} |\n", o["op"].get<std::string>(),
                      o["dtype"].get<std::string>(), o["calls"].get<std::int64_t>(),
                      o["verdict"].get<std::string>(), md_cell(why));
  }
  if (r.contains("probe")) {
    md += fmt::format("\nProbe: {}; {} disagreement(s) with the prediction.\n",
                      r["probe"].value("outcome", "?"), r["probe"]["disagreements"].size());
    for (const auto& d : r["probe"]["disagreements"])
      md += fmt::format("- `{}`: predicted {}, observed {}\n", d["op"].get<std::string>(),
                        d["predicted"].get<std::string>(), d["observed"].get<std::string>());
  }
  return md;
}

}  // namespace conform
