#include "compare/Gate.h"

#include "common/Files.h"
#include "common/Result.h"
#include "common/Text.h"

#include <fmt/format.h>

namespace conform {

GatePolicy GatePolicy::load(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "policy");
  if (!j.is_object()) throw std::runtime_error(fmt::format("policy {} is not a JSON object", path));
  GatePolicy p;
  for (const auto& [key, value] : j.items()) {
    auto flag = [&](bool& field) {
      if (!value.is_boolean())
        throw std::runtime_error(fmt::format("policy {}: \"{}\" must be true or false", path, key));
      field = value.get<bool>();
    };
    auto count = [&](std::int64_t& field) {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
        throw std::runtime_error(
            fmt::format("policy {}: \"{}\" must be a whole number >= 0", path, key));
      field = value.get<std::int64_t>();
    };
    if (key == "fail_on_regression") {
      flag(p.fail_on_regression);
    } else if (key == "fail_on_crash") {
      flag(p.fail_on_crash);
    } else if (key == "fail_on_flaky") {
      flag(p.fail_on_flaky);
    } else if (key == "max_native_ops_lost") {
      count(p.max_native_ops_lost);
    } else if (key == "max_new_fallback_ops") {
      count(p.max_new_fallback_ops);
    } else if (key == "require_acknowledged_improvements") {
      flag(p.require_acknowledged_improvements);
    } else if (key != "description") {
      throw std::runtime_error(fmt::format(
          "policy {}: unknown field \"{}\" (known: fail_on_regression, fail_on_crash, "
          "fail_on_flaky, "
          "max_native_ops_lost, max_new_fallback_ops, require_acknowledged_improvements)",
          path, key));
    }
  }
  return p;
}

GateVerdict judge(const Snapshot& baseline, const Snapshot& run, const GatePolicy& policy) {
  const Diff d = diff_snapshots(baseline, run);
  std::vector<std::string> regressions, notes;
  std::vector<std::string> removed_passing;
  for (const auto& id : d.removed)
    if (is_success(baseline.cases.at(id).outcome)) removed_passing.push_back(id);
  std::vector<std::string> crashes, flaky;
  for (const auto& [id, c] : run.cases) {
    if (is_lost_worker(c.outcome)) crashes.push_back(fmt::format("{} ({})", id, name(c.outcome)));
    if (c.outcome == Outcome::kFlaky) flaky.push_back(fmt::format("{}: {}", id, c.message));
  }

  std::string details;
  auto list = [&](const std::string& title, const std::vector<std::string>& items) {
    details += fmt::format("\n#### {} ({})\n\n", title, items.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(items.size(), 50); ++i)
      details += fmt::format("- {}\n", md_cell(items[i], 300));
    if (items.size() > 50) details += fmt::format("- ... and {} more\n", items.size() - 50);
  };
  std::vector<std::string> failed_now, unverified_now;
  for (const auto& c : d.new_failures)
    failed_now.push_back(fmt::format("{}: {} → {} {}", c.id, c.before, c.after, c.after_message));
  // A match whose values are no longer compared is a pass lost, not a pass.
  for (const auto& c : d.now_unverified)
    unverified_now.push_back(fmt::format("{}: {} → {}", c.id, c.before, c.after));
  if (policy.fail_on_regression &&
      (!failed_now.empty() || !removed_passing.empty() || !unverified_now.empty())) {
    regressions.push_back(fmt::format(
        "{} case(s) that matched in the baseline fail now, {} are unverified now, {} no longer run",
        failed_now.size(), unverified_now.size(), removed_passing.size()));
    if (!failed_now.empty()) list("matched in the baseline, fail now", failed_now);
    if (!unverified_now.empty())
      list("matched in the baseline, values not compared now", unverified_now);
    if (!removed_passing.empty()) list("matched in the baseline, not run now", removed_passing);
  }
  if (policy.fail_on_crash && !crashes.empty()) {
    regressions.push_back(fmt::format("{} crash(es) or timeout(s)", crashes.size()));
    list("crashes and timeouts", crashes);
  }
  if (policy.fail_on_flaky && !flaky.empty()) {
    regressions.push_back(
        fmt::format("{} flaky case(s): failed, then passed when rerun", flaky.size()));
    list("flaky cases", flaky);
  }
  if (static_cast<std::int64_t>(d.native_ops_lost.size()) > policy.max_native_ops_lost) {
    regressions.push_back(
        fmt::format("native coverage dropped: {} aten op(s) no longer run natively (allowed {})",
                    d.native_ops_lost.size(), policy.max_native_ops_lost));
    list("aten ops no longer run natively", d.native_ops_lost);
  }
  if (static_cast<std::int64_t>(d.fallback_ops_new.size()) > policy.max_new_fallback_ops) {
    regressions.push_back(fmt::format("{} aten op(s) newly through the CPU fallback (allowed {})",
                                      d.fallback_ops_new.size(), policy.max_new_fallback_ops));
    list("aten ops newly through the fallback", d.fallback_ops_new);
  }
  std::vector<std::string> improved;
  for (const auto& c : d.new_passes)
    improved.push_back(fmt::format("{}: {} → {}", c.id, c.before, c.after));
  for (const auto& op : d.native_ops_gained) improved.push_back("aten op now native: " + op);
  if (!improved.empty()) {
    notes.push_back(fmt::format("{} improvement(s) not in the baseline", improved.size()));
    list("improvements not in the baseline", improved);
  }

  GateVerdict v;
  if (!regressions.empty()) {
    v.exit_code = 1;
    v.verdict = "FAIL: regressions";
  } else if (!improved.empty() && policy.require_acknowledged_improvements) {
    v.exit_code = 2;
    v.verdict = "FAIL: unacknowledged improvements";
  } else {
    v.verdict = "PASS";
  }
  v.markdown = fmt::format(
      "### neuron-conform gate: {}{}\n\nbaseline `{}` ({} cases) against run `{}` ({} cases)\n\n",
      v.verdict,
      v.exit_code == 2 ? "; update the baseline (`neuron-conform gate --write-baseline`)" : "",
      baseline.name, baseline.cases.size(), run.name, run.cases.size());
  for (const auto& r : regressions) v.markdown += fmt::format("- regression: {}\n", r);
  for (const auto& n : notes) v.markdown += fmt::format("- {}\n", n);
  if (regressions.empty() && notes.empty()) v.markdown += "No change against the baseline.\n";
  v.markdown += details;
  return v;
}

}  // namespace conform
