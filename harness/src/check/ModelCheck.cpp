#include "check/ModelCheck.h"

#include "common/CaseId.h"
#include "common/Result.h"
#include "common/Text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace conform {

using nlohmann::json;

namespace {

// What the run says about one aten op at one dtype.
struct Evidence {
  std::vector<std::string> native, host_only, fallback;      // matched cases, by route
  std::vector<std::string> unverified;                       // ran, values not compared
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
      for (const auto& [op, _] : r.host_only_ops)
        ev.ops[op][id.dtype].host_only.push_back(r.case_id);
    }
    if (r.outcome == Outcome::kUnverified) {
      for (const auto* ops : {&r.native_ops, &r.fallback_ops, &r.host_only_ops})
        for (const auto& [op, _] : *ops) ev.ops[op][id.dtype].unverified.push_back(r.case_id);
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
  if (!e.host_only.empty())
    return {{"verdict", OpVerdict::kHostOnly},
            {"cases", e.host_only.size()},
            {"example", e.host_only.front()},
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
  if (!e.unverified.empty())
    return {{"verdict", OpVerdict::kUnverified},
            {"cases", e.unverified.size()},
            {"example", e.unverified.front()},
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
    into.host_only.insert(into.host_only.end(), d->second.host_only.begin(),
                          d->second.host_only.end());
    into.failing.insert(into.failing.end(), d->second.failing.begin(), d->second.failing.end());
    into.unverified.insert(into.unverified.end(), d->second.unverified.begin(),
                           d->second.unverified.end());
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
      for (const auto& c : cases) {
        if (c.outcome == Outcome::kUnverified)
          return {{"verdict", OpVerdict::kUnverified},
                  {"cases", cases.size()},
                  {"example", c.id},
                  {"how",
                   "its OpInfo ran on the device without error, but its values could not "
                   "be compared"}};
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

OpVerdict verdict_in(const json& v) {
  return v["verdict"].get<OpVerdict>();
}
bool is_kernel(const json& kernel, Kernel k) {
  return kernel == name(k);
}

// Every captured op at every dtype it runs at, judged; and the ops by what that says.
struct Judgement {
  std::vector<OpJudgement> ops;  // worst verdict first
  std::set<std::string> failing, fallback, host_only, unverified, skipped, untested_fallback, views;
  // Untested with a device or composite kernel: a claim of the backend, or other ops the capture
  // does not see (convolution reaches convolution_overrideable). Only views need no evidence.
  std::set<std::string> unproven;
};

// A composite op's verdict from what it reached when check-model's capture replayed it on the
// device (harness/worker/model_check/capture.py): failing if the replay raised; else the worst
// verdict of the ops it reached, each judged by the run (`reached_kernel` says how the worst one
// runs); native when it reached no compiled op.
json verdict_through(const RunEvidence& ev, const std::string& op, const json& reached,
                     const std::string& dtype) {
  if (reached.contains("raised")) {
    const json& e = reached["raised"];
    return {{"verdict", OpVerdict::kFailing},
            {"example", "the op replayed on the device"},
            {"message", e.value("message", std::string())},
            {"failing_op", e.value("failing_op", op)},
            {"how", "replayed once on the device, it raised"}};
  }
  json worst, reaches = json::object();
  for (const auto& [route, kernel] :
       {std::pair{"native_ops", Kernel::kDevice}, std::pair{"host_only_ops", Kernel::kDevice},
        std::pair{"fallback_ops", Kernel::kFallback}}) {
    for (const auto& reached_op : reached.value(route, json::array())) {
      json v = verdict_of(ev, reached_op, dtype, name(kernel));
      reaches[reached_op.get<std::string>()] = v["verdict"];
      if (worst.is_null() || verdict_in(v) < verdict_in(worst)) {
        worst = std::move(v);
        worst["reached_kernel"] = name(kernel);
      }
    }
  }
  if (worst.is_null())
    return {{"verdict", OpVerdict::kNative},
            {"how", "replayed on the device, it reached no compiled op (views, allocation)"}};
  std::string ops;
  for (const auto& [name, _] : reaches.items()) ops += (ops.empty() ? "" : ", ") + name;
  worst["reaches"] = reaches;
  worst["how"] = fmt::format("on the device it reaches {}; the worst decides", ops);
  return worst;
}

Judgement judge_ops(const json& capture, const RunEvidence& ev, const std::string& model_dtype) {
  Judgement j;
  for (const auto& use : capture["ops"]) {
    const std::string op = use["op"];
    std::vector<std::string> dtypes = use["dtypes"].get<std::vector<std::string>>();
    if (dtypes.empty())
      dtypes.push_back(model_dtype);  // factory ops (ones, arange) make the model's dtype
    // Kernel: on the device's dispatch key, a composite of other ops, or none (the CPU fallback).
    const json kernel = use["device_kernel"];
    // A composite op is judged by what it reached on the device, where it was replayed.
    const json reaches = use.value("reaches", json::object());
    for (const auto& dtype : dtypes) {
      const bool replayed = reaches.contains(dtype) && reaches[dtype].value("replayed", false);
      json v = replayed ? verdict_through(ev, op, reaches[dtype], dtype)
                        : verdict_of(ev, op, dtype, kernel);
      if (reaches.contains(dtype) && !replayed) v["not_replayed"] = reaches[dtype].value("why", "");
      const OpVerdict verdict = verdict_in(v);
      const json& runs_as = v.contains("reached_kernel") ? v["reached_kernel"] : kernel;
      if (verdict == OpVerdict::kFailing) j.failing.insert(op);
      if (verdict == OpVerdict::kFallback) j.fallback.insert(op);
      if (verdict == OpVerdict::kHostOnly) j.host_only.insert(op);
      if (verdict == OpVerdict::kUnverified) j.unverified.insert(op);
      if (verdict == OpVerdict::kSkipped) j.skipped.insert(op);
      if (verdict == OpVerdict::kUntested) {
        if (is_kernel(runs_as, Kernel::kFallback))
          j.untested_fallback.insert(op);
        else if (is_kernel(runs_as, Kernel::kView))
          j.views.insert(op);
        else
          j.unproven.insert(op);
      }
      j.ops.push_back({op, dtype, use["calls"].get<std::int64_t>(),
                       use["phases"].get<std::vector<std::string>>(), kernel, verdict,
                       std::move(v)});
    }
  }
  std::stable_sort(j.ops.begin(), j.ops.end(), [](const OpJudgement& a, const OpJudgement& b) {
    return a.verdict < b.verdict;
  });
  return j;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& op : s) out += (out.empty() ? "" : ", ") + op;
  return out;
}

// The model's verdict and exit code: blocked (2), ops on the CPU or unproven (1), native (0).
std::pair<int, std::string> model_verdict(const Judgement& j) {
  if (!j.failing.empty()) return {2, fmt::format("blocked by {}", joined(j.failing))};
  std::set<std::string> on_cpu = j.fallback;
  on_cpu.insert(j.untested_fallback.begin(), j.untested_fallback.end());
  on_cpu.insert(j.skipped.begin(), j.skipped.end());
  std::vector<std::string> parts;
  if (!on_cpu.empty())
    parts.push_back(
        fmt::format("runs with {} op(s) on the CPU fallback: {}", on_cpu.size(), joined(on_cpu)));
  if (!j.host_only.empty())
    parts.push_back(fmt::format("{} op(s) whose kernel computes on the host (host-only): {}",
                                j.host_only.size(), joined(j.host_only)));
  if (!j.unverified.empty())
    parts.push_back(fmt::format("{} op(s) whose values the run could not compare: {}",
                                j.unverified.size(), joined(j.unverified)));
  if (!j.unproven.empty())
    parts.push_back(fmt::format("{} op(s) the run never tested: {} (--probe runs the model)",
                                j.unproven.size(), joined(j.unproven)));
  if (parts.empty()) return {0, "runs natively"};
  return {1, fmt::format("{}", fmt::join(parts, "; "))};
}

// The route each captured op is predicted to take at the model's dtype: native, fallback, or
// failing (it should not run). An observed op is matched exactly, else by its family.
class Prediction {
 public:
  Prediction(const std::vector<OpJudgement>& ops, const std::string& model_dtype) {
    for (const auto& o : ops) {
      // Skipped ops would run on the CPU; untested ones as their kernel says.
      std::string route(name(Route::kFallback));
      if (o.verdict == OpVerdict::kFailing) {
        route = name(OpVerdict::kFailing);
      } else if (o.verdict == OpVerdict::kHostOnly) {
        route = name(Route::kHostOnly);
      } else if (o.verdict == OpVerdict::kNative ||
                 (o.verdict == OpVerdict::kUntested && !is_kernel(o.kernel, Kernel::kFallback))) {
        route = name(Route::kNative);
      }
      if (o.dtype == model_dtype || !routes_.contains(o.op)) routes_[o.op] = route;
    }
  }
  std::optional<std::string> of(const std::string& op) const {
    if (auto it = routes_.find(op); it != routes_.end()) return it->second;
    for (const auto& [name, route] : routes_)
      if (op_family(name) == op_family(op)) return route;
    return std::nullopt;  // not captured
  }

 private:
  std::map<std::string, std::string> routes_;
};

// Where the probe (the tiny model run for real) and the prediction disagree; a probe that
// failed outweighs the prediction: the model is blocked.
void add_probe(ModelCheckResult& result, const json& probe, const Judgement& j,
               const std::string& model_dtype) {
  const Prediction prediction(j.ops, model_dtype);
  json disagreements = json::array();
  const auto check = [&](const std::string& op, Route observed) {
    const auto p = prediction.of(op);
    if (p && *p != name(observed))
      disagreements.push_back({{"op", op}, {"predicted", *p}, {"observed", name(observed)}});
  };
  for (const auto& route : kRoutes) {
    const json ran = probe.value(fmt::format("{}_ops", route.name), json::object());
    for (const auto& [op, _] : ran.items()) check(op, route.value);
  }
  const std::string message = probe.value("message", std::string());
  for (const auto& op : j.failing) {
    if (probe.value("outcome", "") == "ran" && message.find(op) == std::string::npos)
      disagreements.push_back(
          {{"op", op}, {"predicted", name(OpVerdict::kFailing)}, {"observed", "the model ran"}});
  }
  if (probe.value("outcome", "") == name(Outcome::kError) && j.failing.empty()) {
    const std::string culprit = probe.value("failing_op", std::string("the model"));
    disagreements.push_back({{"op", culprit},
                             {"predicted", prediction.of(culprit).value_or("not captured")},
                             {"observed", "failed"}});
    result.exit_code = 2;
    result.verdict = fmt::format("blocked: the probe failed in {} ({}); predicted: {}", culprit,
                                 message.substr(0, 120), result.verdict);
  }
  if (probe.value("outcome", "") == name(Outcome::kFail)) {  // it ran, and computed wrong
    const json where = probe.value("first_differing_module", json());
    const std::string at = where.is_object() ? fmt::format(", first at module {} ({})",
                                                           where["module"].get<std::string>(),
                                                           where["type"].get<std::string>())
                                             : "";
    result.exit_code = std::max(result.exit_code, 1);
    result.verdict = fmt::format("wrong output: the device's output differs from the CPU's{}; {}",
                                 at, result.verdict);
  }
  if (probe.contains("train_step")) {  // --train: the training steps, run for real
    const json& train = probe["train_step"];
    const std::string outcome = train.value("outcome", "");
    const std::string what = train.value("message", std::string()).substr(0, 160);
    if (outcome == name(Outcome::kError) && train.value("stage", "") == "device") {
      result.exit_code = 2;
      result.verdict = fmt::format("blocked: the training step failed on the device ({}); {}", what,
                                   result.verdict);
    } else if (outcome == name(Outcome::kFail)) {
      result.exit_code = std::max(result.exit_code, 1);
      result.verdict = fmt::format("wrong training step: {}; {}", what, result.verdict);
    }
  }
  result.probe = probe;
  (*result.probe)["disagreements"] = disagreements;
}

// Whether the model compiles into one graph: a compile failure blocks it (exit 2), graph breaks
// or a compiled result that differs leave it runnable but not as one graph (at least exit 1).
void add_compile(ModelCheckResult& result, const json& compiled) {
  std::string says;
  int exit_code = 0;
  const auto graphs = compiled.value("graphs", 0);
  const auto breaks = compiled.value("graph_breaks", json::array());
  if (compiled.value("outcome", "") == name(Outcome::kError)) {
    exit_code = 2;
    const std::string stage = compiled.value("stage", std::string("compile"));
    says = stage == "capture"
               ? fmt::format(
                     "does not compile into one graph: {}",
                     breaks.empty() ? std::string("a graph break") : breaks[0].get<std::string>())
               : fmt::format("does not compile ({}{}): {}", stage,
                             compiled.contains("failing_op")
                                 ? ", " + compiled["failing_op"].get<std::string>()
                                 : std::string(),
                             compiled.value("message", std::string()).substr(0, 160));
  } else if (graphs != 1 || !breaks.empty()) {
    exit_code = 1;
    says = fmt::format("compiles into {} graphs ({} graph break reason(s))", graphs, breaks.size());
  } else {
    says = "compiles into one graph";
  }
  result.compile = compiled;
  (*result.compile)["verdict"] = says;
  result.verdict = fmt::format("{}; torch.compile: {}", result.verdict, says);
  result.exit_code = std::max(result.exit_code, exit_code);
}

// Where the model's tensors are (docs/check-model.md, "Placement"): the static part (tensor
// attributes .to(device) does not move) and, with --probe, what the setup left off the device
// and the forward's ops on CPU tensors. Nothing on the device and no op run there: blocked by
// placement (exit 2); any finding: at least exit 1.
void add_placement(ModelCheckResult& result, const json& placement) {
  result.placement = placement;
  const json& findings = placement["findings"];
  const bool probed = placement.contains("device_ops");
  if (probed && !placement["on_device"].get<bool>() && placement["device_ops"].get<int>() == 0) {
    result.exit_code = 2;
    result.verdict = fmt::format(
        "blocked by placement: after {} nothing of the model is on the device and its forward ran "
        "no op there ({} finding(s)); {}",
        placement["setup"].value("by", std::string("the setup")), findings.size(), result.verdict);
    return;
  }
  if (findings.empty()) return;
  std::map<std::string, int> kinds;
  for (const auto& f : findings) ++kinds[f["kind"].get<std::string>()];
  std::vector<std::string> parts;
  for (const auto& [kind, n] : kinds) parts.push_back(fmt::format("{} {}", n, kind));
  result.verdict = fmt::format("{}; placement: {}", result.verdict, fmt::join(parts, ", "));
  result.exit_code = std::max(result.exit_code, 1);
}

// What each input shape cost (docs/check-model.md, "Shapes"): the executables (eager) and graphs
// (torch.compile) every listed shape needed, and what padding to the buckets would cost instead.
std::string shapes_summary(const json& shapes) {
  std::vector<std::string> parts;
  // the estimates at the backend's declared compile latency, in seconds; the counts, as counts
  const std::map<std::string, std::string> estimates{
      {"estimated_compile_seconds", "compiling executables at the declared latency"},
      {"estimated_graph_compile_seconds", "compiling graphs at the declared latency"}};
  for (const auto& [kind, total] : shapes["total"].items()) {
    if (total.is_null()) continue;
    const json& bucketed = shapes["bucketed"][kind];
    if (const auto it = estimates.find(kind); it != estimates.end())
      parts.push_back(fmt::format("~{:.0f} s {} for {} shapes, ~{:.0f} s padded to {} bucket(s)",
                                  total.get<double>(), it->second, shapes["shapes"].size(),
                                  bucketed.get<double>(), shapes["buckets"].size()));
    else
      parts.push_back(fmt::format("{} {} for {} shapes, {} padded to {} bucket(s)",
                                  total.get<int>(), kind, shapes["shapes"].size(),
                                  bucketed.get<int>(), shapes["buckets"].size()));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void add_shapes(ModelCheckResult& result, const json& shapes) {
  result.shapes = shapes;
  std::vector<std::string> buckets;
  for (const auto& b : shapes["buckets"]) buckets.push_back(shape_text(b));
  (*result.shapes)["suggestion"] =
      shapes["buckets"].size() < shapes["shapes"].size()
          ? fmt::format(
                "pad inputs to the buckets {} (each shape to the smallest bucket that holds "
                "it, at most 2x padding): {}",
                fmt::join(buckets, ", "), shapes_summary(shapes))
          : std::string(
                "no two shapes are within 2x padding of each other: every shape is its own bucket");
  for (const auto& row : shapes["shapes"])
    if (row.value("outcome", "") == name(Outcome::kError)) {
      result.exit_code = std::max(result.exit_code, 2);
      result.verdict = fmt::format("{}; blocked at shape {}: {}", result.verdict,
                                   shape_text(row["shape"]), row.value("message", std::string()));
      break;
    }
  result.verdict = fmt::format("{}; shapes: {}", result.verdict, shapes_summary(shapes));
}

}  // namespace

ModelCheckResult judge_model(const json& capture, Store& store, const std::string& run_id,
                             const std::string& db_path) {
  const std::string model_dtype = capture["model"].value("dtype", "float32");
  Judgement j = judge_ops(capture, index_run(store, run_id), model_dtype);
  ModelCheckResult result;
  std::tie(result.exit_code, result.verdict) = model_verdict(j);
  result.model = capture["model"];
  result.run_id = run_id;
  result.db_path = db_path;
  result.counts = {.ops = capture["ops"].size(),
                   .failing = j.failing.size(),
                   .fallback = j.fallback.size(),
                   .host_only = j.host_only.size(),
                   .unverified = j.unverified.size(),
                   .skipped = j.skipped.size(),
                   .untested_fallback = j.untested_fallback.size(),
                   .untested_unproven = j.unproven.size(),
                   .untested_views = j.views.size()};
  result.capture_seconds = capture.value("capture_seconds", 0.0);
  if (capture.contains("probe")) add_probe(result, capture["probe"], j, model_dtype);
  if (capture.contains("compile")) add_compile(result, capture["compile"]);
  if (capture.contains("placement")) add_placement(result, capture["placement"]);
  if (capture.contains("shapes")) add_shapes(result, capture["shapes"]);
  result.ops = std::move(j.ops);
  return result;
}

void to_json(json& j, const OpJudgement& o) {
  j = {{"op", o.op},         {"dtype", o.dtype},     {"calls", o.calls},      {"phases", o.phases},
       {"kernel", o.kernel}, {"verdict", o.verdict}, {"evidence", o.evidence}};
}

void to_json(json& j, const ModelCheckResult& r) {
  const ModelCheckCounts& c = r.counts;
  j = {{"schema", "neuron-conform/check-model"},
       {"schema_version", 1},
       {"model", r.model},
       {"run", {{"id", r.run_id}, {"db", r.db_path}}},
       {"verdict", r.verdict},
       {"exit_code", r.exit_code},
       {"counts",
        {{"ops", c.ops},
         {name(OpVerdict::kFailing), c.failing},
         {name(OpVerdict::kFallback), c.fallback},
         {name(OpVerdict::kHostOnly), c.host_only},
         {name(OpVerdict::kUnverified), c.unverified},
         {name(OpVerdict::kSkipped), c.skipped},
         {"untested_fallback", c.untested_fallback},
         {"untested_unproven", c.untested_unproven},
         {"untested_views", c.untested_views}}},
       {"ops", r.ops},
       {"capture_seconds", r.capture_seconds}};
  if (r.probe) j["probe"] = *r.probe;
  if (r.compile) j["compile"] = *r.compile;
  if (r.placement) j["placement"] = *r.placement;
  if (r.shapes) j["shapes"] = *r.shapes;
}

}  // namespace conform
