// `neuron-conform suites`: the suites a run can name, with their checks and options, as a
// worker finds them (NEURON_CONFORM_SUITES, then the project's suites/).
#include "commands/Commands.h"
#include "common/Environment.h"
#include "plan/Listing.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>


namespace conform {

namespace {

nlohmann::json as_json(const FoundSuite& s) {
  nlohmann::json j = {{"suite", s.name}, {"folder", s.folder}};
  if (s.description) j["description"] = s.description->to_json();
  if (!s.problem.empty()) j["problem"] = s.problem;
  return j;
}

void print_text(const FoundSuite& s) {
  fmt::print("{}  ({})\n", s.name, s.folder);
  if (!s.description) {
    fmt::print("  cannot be loaded: {}\n\n", s.problem);
    return;
  }
  const SuiteDescription& d = *s.description;
  fmt::print("  subjects: {}\n  checks:\n", d.nouns);
  for (const auto& c : d.checks) fmt::print("    {:<18} {}\n", c.name, c.meaning);
  if (!d.options.empty()) fmt::print("  options (--suite-option NAME=VALUE):\n");
  for (const auto& o : d.options) {
    const std::string given = o.required               ? "required"
                              : o.default_value.is_null() ? "no default"
                                                          : "default " + o.default_value.dump();
    fmt::print("    {:<18} {}, {}: {}\n", o.name, o.type, given, o.help);
  }
  if (!d.nightly.runs) {
    fmt::print("  nightly: not run\n");
  } else {
    fmt::print("  nightly: {} shard(s){}{}\n", d.nightly.shards, d.nightly.options.empty() ? "" : ", options ",
               d.nightly.options.empty() ? "" : d.nightly.options.dump());
  }
  fmt::print("\n");
}

// The nightly's list, one suite a line: "<suite> <shards> [--suite-option NAME=VALUE ...]", the
// suites with more shards (the biggest) last, so that the night's `latest` run is its biggest. A
// suite that cannot be loaded fails the list: a night must not silently run without it.
int print_nightly(const std::vector<FoundSuite>& found) {
  std::vector<const FoundSuite*> nightly;
  for (const auto& s : found) {
    if (!s.description) {
      fmt::print(stderr, "neuron-conform suites --nightly: suite '{}' ({}) cannot be loaded: {}\n", s.name,
                 s.folder, s.problem);
      return 1;
    }
    if (s.description->nightly.runs) nightly.push_back(&s);
  }
  std::stable_sort(nightly.begin(), nightly.end(), [](const FoundSuite* a, const FoundSuite* b) {
    return std::pair(a->description->nightly.shards, a->name) < std::pair(b->description->nightly.shards, b->name);
  });
  for (const FoundSuite* s : nightly) {
    const auto& n = s->description->nightly;
    std::string line = fmt::format("{} {}", s->name, n.shards);
    for (const auto& [name, value] : n.options.items())
      line += fmt::format(" --suite-option {}={}", name, value.is_string() ? value.get<std::string>() : value.dump());
    fmt::print("{}\n", line);
  }
  return 0;
}

}  // namespace

int suites_command(const SuitesOptions& o) {
  const ScratchLog log("suites");
  const auto found = find_suites(worker_command("", o.backend_module, "", 0), log.path());
  if (o.nightly) return print_nightly(found);
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& s : found) all.push_back(as_json(s));
    fmt::print("{}\n", all.dump(2));
  } else {
    for (const auto& s : found) print_text(s);
  }
  return 0;
}

Command add_suites_command(CLI::App& cli) {
  auto o = std::make_shared<SuitesOptions>();
  auto* cmd = cli.add_subcommand(
      "suites",
      "List the suites found (NEURON_CONFORM_SUITES, then the project's suites/) with their "
      "checks and the options `run --suite-option` takes (a suite whose checks come from its "
      "options, such as upstream's test names, shows them once configured: its report lists "
      "them)");
  cmd->add_option("--backend-module", o->backend_module, "Backend the worker imports")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the suites as JSON");
  cmd->add_flag("--nightly", o->nightly,
                "Print the suites the nightly runs, one a line: the suite, its shards and its "
                "--suite-option arguments (what ci/nightly.sh and the nightly workflow run)")
      ->excludes("--json");
  return {cmd, [o] { return suites_command(*o); }, 2};
}

}  // namespace conform
