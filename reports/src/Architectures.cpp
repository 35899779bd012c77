#include "Architectures.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace conform {

using nlohmann::json;

namespace {

// The checks an architecture must pass natively to count as running on the device.
const std::set<std::string> kRequired = {"forward", "generate", "backward"};

bool native_pass(const json& c) {
  const std::string& o = c["outcome"].get_ref<const std::string&>();
  return o == "pass" || (o == "xpass" && c["evidence"].value("observed_outcome", "") == "pass");
}

struct Architecture {
  json checks = json::object();  // dtype -> check -> outcome
  double seconds = 0;
  std::int64_t peak_memory = -1;
  std::set<std::string> fallback_ops, failing_ops;
  std::set<std::string> blockers;  // what stands between it and a native pass
  bool required_all_pass = true;
  bool built = false;
  bool only_cpu_failures =
      true;  // every required case that failed, failed on the CPU reference too
  std::string repro;
  std::string first_error;
};

}  // namespace

json architecture_view(const json& cases, const std::vector<std::string>& most_used) {
  std::map<std::string, Architecture> archs;
  for (const auto& c : cases) {
    Architecture& a = archs[c["subject"].get<std::string>()];
    const std::string check = c["check"], outcome = c["outcome"];
    const json& e = c["evidence"];
    a.checks[c["dtype"].get<std::string>()][check] = outcome;
    a.seconds += c["duration"].get<double>();
    if (e.contains("peak_device_memory"))
      a.peak_memory = std::max(a.peak_memory, e["peak_device_memory"].get<std::int64_t>());
    for (const auto& op : c["fallback_ops"]) a.fallback_ops.insert(op.get<std::string>());
    if (e.contains("failing_op")) a.failing_ops.insert(e["failing_op"].get<std::string>());
    a.built = a.built || e.value("stage", "") != "build";
    if (a.repro.empty() && c.contains("repro") && !native_pass(c)) a.repro = c["repro"];
    if (a.first_error.empty() && e.contains("message") && !native_pass(c))
      a.first_error =
          e.value("stage", outcome) + ": " + e["message"].get<std::string>().substr(0, 300);
    if (!kRequired.contains(check) || native_pass(c)) continue;
    a.required_all_pass = false;
    a.only_cpu_failures = a.only_cpu_failures && e.value("where", "") == "harness";
    // Blockers: the ops that fell back, the op an error names; else no single op is to blame.
    for (const auto& op : c["fallback_ops"]) a.blockers.insert(op.get<std::string>());
    if (e.contains("failing_op")) {
      a.blockers.insert(e["failing_op"].get<std::string>());
    } else if (outcome != "fallback") {
      a.blockers.insert(fmt::format("({} in {}, no single op)", outcome, check));
    }
  }

  json rows = json::array();
  std::int64_t passing = 0, passing_most_used = 0, most_used_present = 0;
  const std::set<std::string> most(most_used.begin(), most_used.end());
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>>
      impact;  // blocks, would pass
  for (const auto& [name, a] : archs) {
    const bool ok = a.required_all_pass;
    passing += ok;
    if (most.contains(name)) ++most_used_present, passing_most_used += ok;
    for (const auto& op : a.blockers) {
      if (op.starts_with("(")) continue;
      impact[op].first.insert(name);
      if (a.blockers.size() == 1) impact[op].second.insert(name);
    }
    rows.push_back({{"architecture", name},
                    {"most_used", most.contains(name)},
                    {"status", !a.built              ? "cannot build"
                               : ok                  ? "native"
                               : a.only_cpu_failures ? "fails on the CPU too"
                                                     : "blocked"},
                    {"checks", a.checks},
                    {"seconds", a.seconds},
                    {"peak_device_memory", a.peak_memory < 0 ? json() : json(a.peak_memory)},
                    {"fallback_ops", a.fallback_ops},
                    {"failing_ops", a.failing_ops},
                    {"blockers", a.blockers},
                    {"first_error", a.first_error},
                    {"repro", a.repro}});
  }
  json ranking = json::array();
  for (const auto& [op, sets] : impact) {
    ranking.push_back({{"op", op},
                       {"would_pass_if_fixed", sets.second.size()},
                       {"blocks", sets.first.size()},
                       {"architectures_unblocked", sets.second},
                       {"architectures_blocked", sets.first}});
  }
  std::stable_sort(ranking.begin(), ranking.end(), [](const json& a, const json& b) {
    return std::pair(a["would_pass_if_fixed"].get<std::size_t>(), a["blocks"].get<std::size_t>()) >
           std::pair(b["would_pass_if_fixed"].get<std::size_t>(), b["blocks"].get<std::size_t>());
  });
  const auto sentence = [](std::int64_t n, std::int64_t m, const char* which) {
    return fmt::format(
        "{} of {} {}causal-LM architectures pass forward, generate and backward natively", n, m,
        which);
  };
  return {{"headline",
           {{"architectures", archs.size()},
            {"passing", passing},
            {"most_used", most_used_present},
            {"most_used_passing", passing_most_used},
            {"text", sentence(passing, static_cast<std::int64_t>(archs.size()), "")},
            {"most_used_text", sentence(passing_most_used, most_used_present, "most-used ")}}},
          {"architectures", rows},
          {"op_impact", ranking}};
}

}  // namespace conform
