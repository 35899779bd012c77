#include "report/ApiCompat.h"

#include "common/Evidence.h"
#include "common/Text.h"
#include "common/Vocabulary.h"
#include "report/Formats.h"
#include "report/Subjects.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace conform {

using nlohmann::json;

namespace {

constexpr std::array<const char*, 2> kApiModes = {"eager", "compile"};
// What an entry is in one mode (docs/api-compat.md), in the order the tables show them.
constexpr std::array<const char*, 7> kApiStatuses = {
    "Y", "CPU_FALLBACK", "HOST_ONLY", "NATIVE_UNKNOWN", "UNVERIFIED", "N", "untested"};

// TorchNeuron's table lists these namespaces in this order; any other comes after, by name.
constexpr std::array<const char*, 8> kSectionOrder = {
    "torch",        "torch.Tensor", "torch.nn.functional", "torch.nn",
    "torch.linalg", "torch.fft",    "torch.special",       "torch.optim"};

std::size_t section_rank(const std::string& section) {
  const auto* found = std::find(kSectionOrder.begin(), kSectionOrder.end(), section);
  return static_cast<std::size_t>(found - kSectionOrder.begin());
}

std::string joined(const std::set<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

// What a case's evidence says in one line: its message, else its skip-list entry's reason.
std::string case_reason(const json& c) {
  const json& e = c["evidence"];
  if (const Evidence core = Evidence::read(e); !core.message.empty()) return one_line(core.message);
  if (e.contains("skiplist") && e["skiplist"].contains("reason"))
    return one_line(e["skiplist"]["reason"].get<std::string>());
  return "";
}

// One entry's status in one mode, over the cases of every subject that tests it there.
json judge(const std::vector<const json*>& cases, bool mode_ran) {
  if (!mode_ran)
    return {
        {"status", "untested"}, {"detail", "no run tests this mode"}, {"dtypes", json::array()}};
  if (cases.empty())
    return {{"status", "untested"}, {"detail", "no case"}, {"dtypes", json::array()}};
  struct Ran {
    const json* c;
    Outcome outcome;
    std::string dtype;
  };
  std::vector<Ran> ran;
  std::map<std::string, bool> works;      // dtype -> every case run at it matched
  std::map<std::string, bool> unchecked;  // dtype -> every case matched or ran unverified
  const json* skipped = nullptr;
  for (const json* c : cases) {
    const Outcome outcome = parse_outcome((*c)["outcome"].get<std::string>());
    if (kind(outcome) == OutcomeKind::kNotRun) {
      skipped = skipped ? skipped : c;
      continue;
    }
    ran.push_back({c, outcome, (*c)["dtype"].get<std::string>()});
    auto [it, fresh] = works.emplace(ran.back().dtype, true);
    it->second = it->second && is_success(outcome);
    auto [u, first] = unchecked.emplace(ran.back().dtype, true);
    u->second = u->second && (is_success(outcome) || outcome == Outcome::kUnverified);
  }
  if (works.empty())
    return {{"status", "untested"},
            {"detail", "skip list: " + case_reason(*skipped)},
            {"dtypes", json::array()}};
  std::set<std::string> good, bad;
  for (const auto& [dtype, ok] : works) (ok ? good : bad).insert(dtype);
  std::map<std::string, std::set<std::string>> fell_back, on_host;  // aten op -> dtypes
  std::set<std::string> unobserved;  // dtypes where a case matched with its route unseen
  const json* worst = nullptr;
  int worst_severity = -1;
  for (const auto& [c, outcome, dtype] : ran) {
    if (good.contains(dtype)) {
      for (const auto& op : (*c)["fallback_ops"]) fell_back[op.get<std::string>()].insert(dtype);
      for (const auto& op : c->value("host_only_ops", json::array()))
        on_host[op.get<std::string>()].insert(dtype);
      if (ran_as(*c, Outcome::kNativeUnknown)) unobserved.insert(dtype);
    }
    if (!is_success(outcome) && info_of(kOutcomes, outcome).severity > worst_severity) {
      worst = c;
      worst_severity = info_of(kOutcomes, outcome).severity;
    }
  }
  const std::string outcome = worst ? (*worst)["outcome"].get<std::string>() : "";
  const std::string reason = worst ? case_reason(*worst) : "";
  std::set<std::string> ran_unverified;  // nothing failed there, but some values went uncompared
  for (const auto& dtype : bad)
    if (unchecked.at(dtype)) ran_unverified.insert(dtype);
  if (good.empty() && ran_unverified.size() == bad.size())
    return {{"status", "UNVERIFIED"},
            {"detail", fmt::format("runs without error at {}, but its values could not be "
                                   "compared with the CPU's (random or uninitialized)",
                                   joined(ran_unverified))},
            {"dtypes", json::array()}};
  if (good.empty())
    return {{"status", "N"},
            {"detail", fmt::format("{} at {}: {}", outcome, joined(bad), reason)},
            {"dtypes", json::array()}};
  // The ops that kept it from running natively: those that fell back, else those whose kernel
  // computed on the host.
  const auto& held_back = fell_back.empty() ? on_host : fell_back;
  std::vector<std::string> ops;
  for (const auto& [op, dtypes] : held_back)
    ops.push_back(fmt::format("{} ({})", op, joined(dtypes)));
  std::string detail = fmt::format("{}", fmt::join(ops, "; "));
  if (!bad.empty())
    detail += fmt::format("{}not at {} ({}: {})", detail.empty() ? "" : "; ", joined(bad), outcome,
                          reason);
  if (fell_back.empty() && !on_host.empty()) {  // TorchNeuron's "Host-only"
    return {{"status", "HOST_ONLY"},
            {"detail", "computed on the host by: " + detail},
            {"dtypes", json(good)},
            {"fallback_ops", json::array()},
            {"host_only_ops", json(ops)}};
  }
  if (fell_back.empty() && !unobserved.empty()) {  // matched, but never called native unseen
    detail = fmt::format("matches the CPU; how its ops ran could not be observed at {}{}",
                         joined(unobserved), detail.empty() ? "" : "; " + detail);
    return {{"status", "NATIVE_UNKNOWN"},
            {"detail", detail},
            {"dtypes", json(good)},
            {"fallback_ops", json::array()}};
  }
  return {{"status", fell_back.empty() ? "Y" : "CPU_FALLBACK"},
          {"detail", detail},
          {"dtypes", json(good)},
          {"fallback_ops", json(ops)}};
}

json run_of(const json& coverage, const std::string& mode) {
  const json& run = coverage["run"];
  return {{"id", run["id"]},
          {"suite", run["suite"]},
          {"mode", mode},
          {"started_at", run["started_at"]},
          {"torch", run["torch"]},
          {"backend", run["backend_module"]},
          {"backend_version", run["backend_version"]},
          {"harness_version", run["harness_version"]}};
}

}  // namespace

json api_compat(const std::vector<ApiSource>& sources) {
  struct Row {
    std::string section, kind;
    std::map<std::string, std::vector<std::pair<std::size_t, std::string>>>
        tested;  // mode -> (source, subject)
  };
  std::map<std::string, Row> rows;  // by name
  std::set<std::string> modes_ran;
  std::vector<std::map<std::string, std::vector<const json*>>> cases(sources.size());
  json runs = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string mode = sources[i].api.at("mode").get<std::string>();
    modes_ran.insert(mode);
    runs.push_back(run_of(sources[i].coverage, mode));
    // Only the checks the suite says test the API itself decide its status (all when it names
    // none): a feature beyond it (forward-mode AD, autocast) is reported per check by the run's
    // report.
    std::optional<std::set<std::string>> judged_by;
    if (sources[i].api.contains("checks"))
      judged_by = sources[i].api["checks"].get<std::set<std::string>>();
    for (const auto& c : sources[i].coverage["cases"])
      if (!judged_by || judged_by->contains(c["check"].get<std::string>()))
        cases[i][c["subject"].get<std::string>()].push_back(&c);
    for (const auto& [subject, entries] : sources[i].api.at("subjects").items())
      for (const auto& e : entries) {
        Row& row = rows[e.at("name").get<std::string>()];
        row.section = e.at("section").get<std::string>();
        if (row.kind.empty()) row.kind = e.at("kind").get<std::string>();
        row.tested[mode].emplace_back(i, subject);
      }
  }
  std::map<std::pair<std::size_t, std::string>, json> sections;  // (rank, name) -> entries
  for (const auto& [name, row] : rows) {
    json entry = {{"name", name}, {"kind", row.kind}};
    std::set<std::string> subjects;
    for (const char* mode : kApiModes) {
      std::vector<const json*> mode_cases;
      const auto tested = row.tested.find(mode);
      if (tested != row.tested.end())
        for (const auto& [source, subject] : tested->second) {
          subjects.insert(subject);
          const auto found = cases[source].find(subject);
          if (found != cases[source].end())
            mode_cases.insert(mode_cases.end(), found->second.begin(), found->second.end());
        }
      entry[mode] = judge(mode_cases, modes_ran.contains(mode));
    }
    entry["subjects"] = subjects;
    sections[{section_rank(row.section), row.section}].push_back(std::move(entry));
  }
  json out_sections = json::array();
  for (auto& [key, entries] : sections) {
    json counts = json::object();
    for (const char* mode : kApiModes) {
      counts[mode] = json::object();
      for (const char* status : kApiStatuses) counts[mode][status] = 0;
      for (const auto& e : entries) {
        json& n = counts[mode][e[mode]["status"].get<std::string>()];
        n = n.get<int>() + 1;
      }
    }
    out_sections.push_back(
        {{"name", key.second}, {"counts", counts}, {"entries", std::move(entries)}});
  }
  return {{"schema", "neuron-conform/api-compat"},
          {"schema_version", 1},
          {"runs", runs},
          {"sections", out_sections}};
}

json api_compat_changes(const json& before, const json& after) {
  std::map<std::string, const json*> old;
  for (const auto& s : before["sections"])
    for (const auto& e : s["entries"]) old[e["name"].get<std::string>()] = &e;
  json changes = json::array();
  for (const auto& s : after["sections"])
    for (const auto& e : s["entries"]) {
      const auto found = old.find(e["name"].get<std::string>());
      for (const char* mode : kApiModes) {
        const std::string now = e[mode]["status"].get<std::string>();
        const std::string then = found == old.end()
                                     ? std::string("absent")
                                     : (*found->second)[mode]["status"].get<std::string>();
        if (now != then)
          changes.push_back({{"name", e["name"]},
                             {"section", s["name"]},
                             {"mode", mode},
                             {"before", then},
                             {"after", now}});
      }
    }
  return changes;
}

namespace {

// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
std::string anchor(const std::string& heading) {
  std::string out;
  for (const char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == ' ')
      out += '-';
  }
  return out;
}

std::string cell(const json& status) {
  const std::string s = status["status"].get<std::string>(),
                    detail = status["detail"].get<std::string>();
  return md_cell(detail.empty() ? s : s + ": " + detail, 300);
}

}  // namespace

std::string render_api_compat_markdown(const json& table, const json& changes) {
  std::string out = "# torch API compatibility\n\n";
  std::set<std::string> versions;
  for (const auto& r : table["runs"])
    versions.insert(fmt::format("torch {} · {} {} · harness {}", r["torch"].get<std::string>(),
                                r["backend"].get<std::string>(),
                                r["backend_version"].get<std::string>(),
                                r["harness_version"].get<std::string>()));
  out += fmt::format("Derived by `neuron-conform api-compat` from test evidence ({}).\n\n",
                     joined(versions));
  out += "| run | suite | mode | started |\n| --- | --- | --- | --- |\n";
  for (const auto& r : table["runs"])
    out += fmt::format("| `{}` | {} | {} | {} |\n", r["id"].get<std::string>(),
                       r["suite"].get<std::string>(), r["mode"].get<std::string>(),
                       r["started_at"].get<std::string>());
  out +=
      "\n`Y`: runs on the device at the dtypes listed, every case matching the CPU. "
      "`CPU_FALLBACK`: works, with the aten ops that fell back to the CPU (and at which dtypes). "
      "`HOST_ONLY`: works, none through the fallback, but a kernel of the backend copied device "
      "data to the host and computed there (TorchNeuron's \"Host-only\"; the ops and dtypes). "
      "`NATIVE_UNKNOWN`: works, but how its ops ran could not be observed (docs/backends.md). "
      "`UNVERIFIED`: runs without error, but its values could not be compared with the CPU's "
      "(random or uninitialized outputs); never counted as working. "
      "`N`: no dtype works (the worst outcome, where, and why). `untested`: no case, or every "
      "case skipped (the skip list's reason).\n\n";
  out += "| section | entries";
  std::string rule = "| --- | ---:";
  for (const char* mode : kApiModes)
    for (const char* status : kApiStatuses) {
      out += fmt::format(" | {} {}", mode, status);
      rule += " | ---:";
    }
  out += " |\n" + rule + " |\n";
  for (const auto& s : table["sections"]) {
    out += fmt::format("| [{}](#{}) | {}", s["name"].get<std::string>(),
                       anchor(s["name"].get<std::string>()), s["entries"].size());
    for (const char* mode : kApiModes)
      for (const char* status : kApiStatuses)
        out += fmt::format(" | {}", s["counts"][mode][status].get<int>());
    out += " |\n";
  }
  if (!changes.empty()) {
    out += fmt::format(
        "\n## Changes ({})\n\n| API | mode | before | now |\n| --- | --- | --- | --- |\n",
        changes.size());
    for (const auto& c : changes)
      out += fmt::format("| `{}` | {} | {} | {} |\n", c["name"].get<std::string>(),
                         c["mode"].get<std::string>(), c["before"].get<std::string>(),
                         c["after"].get<std::string>());
  }
  for (const auto& s : table["sections"]) {
    out += fmt::format(
        "\n## {}\n\n| API | kind | eager | eager dtypes | torch.compile | compile dtypes |\n"
        "| --- | --- | --- | --- | --- | --- |\n",
        s["name"].get<std::string>());
    for (const auto& e : s["entries"]) {
      out +=
          fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", e["name"].get<std::string>(),
                      e["kind"].get<std::string>(), cell(e["eager"]),
                      joined(e["eager"]["dtypes"].get<std::set<std::string>>()), cell(e["compile"]),
                      joined(e["compile"]["dtypes"].get<std::set<std::string>>()));
    }
  }
  return out;
}

std::string render_api_compat_csv(const json& table) {
  std::string out =
      "section,api,kind,eager,eager_detail,eager_dtypes,compile,compile_detail,compile_dtypes\n";
  for (const auto& s : table["sections"])
    for (const auto& e : s["entries"]) {
      out += fmt::format("{},{},{}", csv_field(s["name"].get<std::string>()),
                         csv_field(e["name"].get<std::string>()),
                         csv_field(e["kind"].get<std::string>()));
      for (const char* mode : kApiModes)
        out += fmt::format(",{},{},{}", e[mode]["status"].get<std::string>(),
                           csv_field(e[mode]["detail"].get<std::string>()),
                           csv_field(joined(e[mode]["dtypes"].get<std::set<std::string>>())));
      out += "\n";
    }
  return out;
}

}  // namespace conform
