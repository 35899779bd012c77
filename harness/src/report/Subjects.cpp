#include "report/Subjects.h"

#include "common/Evidence.h"
#include "common/Result.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace conform {

using nlohmann::json;

namespace {

Outcome outcome_of(const json& c) {
  return c["outcome"].get<Outcome>();
}

struct Subject {
  OutcomeCounts counts;
  json checks = json::object();  // dtype -> check -> outcome
  double seconds = 0;
  std::int64_t peak_memory = -1;
  std::set<std::string> fallback_ops, host_only_ops, failing_ops;
  std::set<std::string> blockers;  // what stands between it and running natively
  // Every native-check case that did not pass matched with a kernel that computed on the host.
  bool only_host_only = true;
  bool native_checks_ran = false;
  bool native = true;
  // Every native-check case matched, some where how their ops ran could not be observed.
  bool unobserved = false;
  bool only_unobserved = true;
  bool built = false;
  bool only_cpu_failures = true;  // every native-check case that failed, failed on the CPU too
  std::string repro;
  std::string first_error;
  InputSpace space;

  void add(const json& c, const SuiteDescription& suite);
};

std::string verdict_of(const Subject& s) {
  if (!s.built) return "cannot build";
  if (s.native) return "native";
  if (s.unobserved && s.only_unobserved) return "matches, native unknown";
  if (s.native_checks_ran && s.only_host_only) return "matches, host-only";
  return s.only_cpu_failures ? "fails on the CPU too" : "blocked";
}

void Subject::add(const json& c, const SuiteDescription& suite) {
  const std::string check = c["check"];
  const Outcome outcome = outcome_of(c);
  const json& e = c["evidence"];
  const Evidence core = Evidence::read(e);
  ++counts[outcome];
  space.add(e);
  checks[c["dtype"].get<std::string>()][check] = outcome;
  seconds += c["duration"].get<double>();
  if (e.contains("peak_device_memory"))
    peak_memory = std::max(peak_memory, e["peak_device_memory"].get<std::int64_t>());
  for (const auto& op : c["fallback_ops"]) fallback_ops.insert(op.get<std::string>());
  const json host_only = c.value("host_only_ops", json::array());
  for (const auto& op : host_only) host_only_ops.insert(op.get<std::string>());
  if (!core.failing_op.empty()) failing_ops.insert(core.failing_op);
  built = built || core.stage != name(Stage::kBuild);
  const bool passed = ran_as(c, Outcome::kPass);  // every op on the device
  if (repro.empty() && c.contains("repro") && !passed) repro = c["repro"];
  if (first_error.empty() && !core.message.empty() && !passed)
    first_error = (core.stage.empty() ? std::string(name(outcome)) : core.stage) + ": " +
                  core.message.substr(0, 300);
  if (!suite.native_checks.contains(check)) return;
  native_checks_ran = true;
  if (passed) return;
  native = false;
  if (ran_as(c, Outcome::kNativeUnknown)) {  // no blocker: nothing is known to stand in the way
    unobserved = true;
    return;
  }
  only_unobserved = false;
  only_host_only = only_host_only && outcome == Outcome::kHostOnly;
  only_cpu_failures = only_cpu_failures && core.where == Where::kHarness;
  // Blockers: the ops that fell back, the op an error names; else no single op is to blame.
  for (const auto& op : c["fallback_ops"]) blockers.insert(op.get<std::string>());
  for (const auto& op : host_only) blockers.insert(op.get<std::string>() + " (host-only)");
  if (!core.failing_op.empty()) {
    blockers.insert(core.failing_op);
  } else if (e.contains("graph_breaks") && e["graph_breaks"].is_array() &&
             !e["graph_breaks"].empty()) {  // torch.compile could not capture one graph
    blockers.insert("graph break: " + e["graph_breaks"][0].get<std::string>().substr(0, 160));
  } else if (outcome == Outcome::kUnverified) {
    blockers.insert(fmt::format("(values not compared in {}: unverified)", check));
  } else if (outcome != Outcome::kFallback && outcome != Outcome::kHostOnly) {
    blockers.insert(fmt::format("({} in {}, no single op)", name(outcome), check));
  }
}

json row_of(const std::string& subject, const Subject& s,
            const std::vector<std::string>& headlines) {
  json counts = json::object();
  for (const auto& o : kOutcomes) {
    const auto it = s.counts.find(o.value);
    counts[std::string(o.name)] = it == s.counts.end() ? 0 : it->second;
  }
  return {{"name", subject},
          {"status", subject_status(s.counts)},
          {"native", s.native},
          {"verdict", verdict_of(s)},
          {"headlines", headlines},
          {"counts", counts},
          {"dtypes", s.checks},
          {"seconds", s.seconds},
          {"peak_device_memory", s.peak_memory < 0 ? json() : json(s.peak_memory)},
          {"fallback_ops", s.fallback_ops},
          {"host_only_ops", s.host_only_ops},
          {"failing_ops", s.failing_ops},
          {"blockers", s.blockers},
          {"first_error", s.first_error},
          {"repro", s.repro},
          {"space", s.space.to_json()}};
}

}  // namespace

void InputSpace::add(const json& e) {
  const auto names = [](const json& value, std::set<std::string>& into) {
    if (value.is_array()) {
      for (const auto& v : value)
        if (v.is_string()) into.insert(v.get<std::string>());
    } else if (value.is_object()) {
      for (const auto& [key, _] : value.items()) into.insert(key);
    }
  };
  std::set<std::string> kinds;
  names(e.value("layouts", json()), kinds);
  for (const auto& kind : kinds)
    (kind.starts_with("grad_") ? gradient_layouts : layouts).insert(kind);
  names(e.value("device_variants", json()), devices);
  names(e.value("relations", json()), relations);
  names(e.value("arguments_varied", json()), arguments);
  if (e.contains("lengths") && e["lengths"].is_array())
    for (const auto& n : e["lengths"])
      if (n.is_number_integer()) lengths.insert(n.get<std::int64_t>());
  if (e.contains("edge_variants") && e["edge_variants"].is_number_integer())
    edge_variants += e["edge_variants"].get<std::int64_t>();
  if (e.contains("fuzz") && e["fuzz"].is_object())
    fuzz_examples += e["fuzz"].value("examples_run", std::int64_t{0});
  if (e.contains("contract") && e["contract"].is_object() && e["contract"].contains("property"))
    contracts.insert(e["contract"]["property"].get<std::string>());
}

json InputSpace::to_json() const {
  return {{"layouts", layouts},
          {"gradient_layouts", gradient_layouts},
          {"devices", devices},
          {"relations", relations},
          {"arguments_varied", arguments},
          {"list_lengths", lengths},
          {"edge_variants", edge_variants},
          {"fuzz_examples", fuzz_examples},
          {"random_contracts", contracts}};
}

bool ran_as(const json& c, Outcome outcome) {
  const Outcome o = outcome_of(c);
  return o == outcome ||
         (o == Outcome::kXpass && c["evidence"].value("observed_outcome", "") == name(outcome));
}

json subject_view(const json& cases, const SuiteDescription& suite) {
  std::map<std::string, Subject> subjects;
  for (const auto& c : cases) subjects[c["subject"].get<std::string>()].add(c, suite);

  // Which headline subsets each subject is in.
  std::map<std::string, std::vector<std::string>> member_of;
  for (const auto& h : suite.headlines)
    for (const auto& subject : h.subjects) member_of[subject].push_back(h.name);

  json rows = json::array();
  std::map<SubjectStatus, std::int64_t> by_status;
  std::int64_t native = 0, native_unknown = 0;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> in_headline;  // present, native
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>>
      impact;  // op -> (blocks, would run natively if fixed)
  for (auto& [subject_name, s] : subjects) {
    s.native = s.native && s.native_checks_ran;
    ++by_status[subject_status(s.counts)];
    native += s.native;
    native_unknown += s.native_checks_ran && s.unobserved && s.only_unobserved;
    const auto& headlines = member_of[subject_name];
    for (const auto& h : headlines) {
      ++in_headline[h].first;
      in_headline[h].second += s.native;
    }
    for (const auto& op : s.blockers) {
      if (op.starts_with("(")) continue;
      impact[op].first.insert(subject_name);
      if (s.blockers.size() == 1) impact[op].second.insert(subject_name);
    }
    rows.push_back(row_of(subject_name, s, headlines));
  }
  json ranking = json::array();
  for (const auto& [op, sets] : impact) {
    ranking.push_back({{"op", op},
                       {"would_pass_if_fixed", sets.second.size()},
                       {"blocks", sets.first.size()},
                       {"subjects_unblocked", sets.second},
                       {"subjects_blocked", sets.first}});
  }
  std::stable_sort(ranking.begin(), ranking.end(), [](const json& a, const json& b) {
    return std::pair(a["would_pass_if_fixed"].get<std::size_t>(), a["blocks"].get<std::size_t>()) >
           std::pair(b["would_pass_if_fixed"].get<std::size_t>(), b["blocks"].get<std::size_t>());
  });
  json status_counts = json::object();
  for (const auto& [status, n] : by_status) status_counts[std::string(name(status))] = n;
  const auto total = static_cast<std::int64_t>(subjects.size());
  std::string text = suite.native_sentence(native, total);
  if (native_unknown > 0)
    text += fmt::format("; {} more match the CPU where how their ops ran could not be observed",
                        native_unknown);
  json headlines = json::array();
  for (const auto& h : suite.headlines) {
    const auto [present, passing] = in_headline[h.name];
    headlines.push_back({{"name", h.name},
                         {"title", h.title},
                         {"subjects", present},
                         {"native", passing},
                         {"text", suite.native_sentence(passing, present, h.title)}});
  }
  return {{"headline",
           {{"subjects", total},
            {"subjects_by_status", status_counts},
            {"subjects_native", native},
            {"subjects_native_unknown", native_unknown},
            {"text", text},
            {"headlines", headlines}}},
          {"subjects", rows},
          {"op_impact", ranking}};
}

}  // namespace conform
