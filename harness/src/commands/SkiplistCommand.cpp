// `neuron-conform skiplist lint|stats|stale|update|export|import`: keeping the expectation files
// honest, and speaking PyTorch's own test configuration.
#include "commands/Commands.h"
#include "common/CaseId.h"
#include "common/Environment.h"
#include "common/Evidence.h"
#include "common/Files.h"
#include "common/Result.h"
#include "common/Text.h"
#include "execute/Worker.h"
#include "expect/Skiplist.h"
#include "plan/Listing.h"
#include "record/Store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <ranges>
#include <set>
#include <tuple>

namespace conform {
namespace {

// The suites a worker finds (NEURON_CONFORM_SUITES, then the project's suites/).
std::vector<FoundSuite> found_suites(const std::string& backend_module) {
  const ScratchLog log("lint-suites");
  return find_suites(worker_command("", backend_module, "", 0), log.path(),
                     /*check_reviewed=*/true);
}

// What is wrong in the reviewed documents the suites read (facts about ops, tables of models,
// ...): a malformed entry, or a fact that changes nothing (stale), each with its suite.
std::vector<std::pair<std::string, std::string>> reviewed_problems(
    const std::vector<FoundSuite>& suites) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : suites)
    for (const auto& problem : s.reviewed_problems) out.emplace_back(s.name, problem);
  return out;
}

// The subjects of a suite's cases, and the torch the listing worker imported.
// A suite's subjects as a worker lists them; `suite` empty: the worker's default suite.
struct ListedSubjects {
  std::string suite;  // as the worker named it
  std::set<std::string> subjects;
  std::string torch_version;
};

ListedSubjects list_subjects(const SkiplistOptions& o, const std::string& suite) {
  const ScratchLog log("lint-" + (suite.empty() ? std::string("default") : suite));
  const Listing listing =
      list_suite(suite, worker_command(suite, o.backend_module, "", 0), log.path());
  ListedSubjects out{listing.suite, {}, listing.hello.value("torch", "0")};
  for (const auto& c : listing.cases) out.subjects.insert(c.subject);
  return out;
}

// Every entry's subjects are checked against the suites it names, each suite listed once by a
// worker; "*" stands for --suite (default: the worker's default suite), which must list (its
// torch selects the active entries). A suite
// that cannot be listed as it is (upstream needs a PyTorch checkout: an option of a run) leaves
// its entries' subjects unchecked, said in the output; a suite that does not exist is a problem.
int lint(const SkiplistOptions& o) {
  std::string torch_version = "0";
  std::string star_suite = o.suite;  // what "*" stands for
  std::map<std::string, std::set<std::string>> listed;
  if (o.check_subjects) {
    ListedSubjects first = list_subjects(o, o.suite);
    star_suite = first.suite;
    torch_version = first.torch_version;
    listed[first.suite] = std::move(first.subjects);
  }
  std::vector<std::string> paths =
      skiplist_paths(o.paths, nlohmann::json::object(), o.backend_module);
  std::optional<std::vector<FoundSuite>> suites;  // found once, when needed
  // The shipped lists: every suite's own first (as a run reads them), then the backend's.
  if (o.paths.empty()) {
    suites = found_suites(o.backend_module);
    std::vector<std::string> own;
    for (const auto& s : *suites)
      if (s.description && !s.description->own_skiplist.empty())
        own.push_back(s.description->own_skiplist);
    paths.insert(paths.begin(), own.begin(), own.end());
  }
  Skiplists lists = load_skiplists(paths, torch_version);
  std::vector<std::string> notes;
  // The suites' other reviewed documents (facts about ops, tables of models, ...), each read as a
  // run would read it.
  if (suites) {
    std::size_t readers = 0;
    for (const auto& s : *suites) readers += s.reviewed_readers.size();
    for (const auto& [suite, problem] : reviewed_problems(*suites))
      lists.problems.push_back({{fmt::format("suite '{}'", suite)}, problem});
    notes.push_back(fmt::format("reviewed documents of the suites read: {} reader(s)", readers));
  }
  if (o.check_subjects) {
    std::set<std::string> missing;
    std::map<std::string, std::string> unlisted;  // suite -> why the worker could not list it
    // The other suites entries name are listed at once, each by its own worker, while one more
    // worker says which suites exist (a listing that fails for a suite that does not exist is
    // no news).
    std::map<std::string, std::future<ListedSubjects>> listings;
    for (const auto& suite : suites_named(lists.entries, star_suite))
      if (!listed.contains(suite))
        listings[suite] =
            std::async(std::launch::async, [&o, suite] { return list_subjects(o, suite); });
    std::set<std::string> existing;
    if (!listings.empty()) {
      if (!suites) suites = found_suites(o.backend_module);
      for (const auto& s : *suites) existing.insert(s.name);
    }
    for (auto& [suite, listing] : listings) {
      try {
        ListedSubjects got = listing.get();
        listed[suite] = std::move(got.subjects);
      } catch (const std::exception& e) {
        if (!existing.contains(suite)) {
          missing.insert(suite);
          continue;
        }
        const std::string why = e.what();
        unlisted[suite] = why.substr(0, why.find('\n'));
      }
    }
    for (const Entry& e : lists.entries)
      for (const auto& s : e.suite)
        if (missing.contains(s))
          lists.problems.push_back(
              {e.where, fmt::format("suite '{}' is no suite: no {}/suite.py in "
                                    "NEURON_CONFORM_SUITES or {}/suites",
                                    s, s, data_root())});
    const SubjectCheck checked = check_subjects(lists.entries, listed, star_suite, torch_version);
    lists.problems.insert(lists.problems.end(), checked.problems.begin(), checked.problems.end());
    for (const auto& [suite, n] : checked.unchecked) {
      if (missing.contains(suite)) continue;
      notes.push_back(
          fmt::format("suite '{}': the subjects of {} entr{} not checked: listing "
                      "the suite needs a run's options or failed: {}",
                      suite, n, n == 1 ? "y is" : "ies are", unlisted[suite]));
    }
    notes.push_back(fmt::format("subjects checked in {} of {} active entries (suites listed: {})",
                                checked.checked, lists.entries.size(),
                                fmt::join(std::views::keys(listed), ", ")));
  }
  // A known failure keeps its shape: an xfail entry records the failure it expects, so that a
  // case failing otherwise is news (xfail_changed), not hidden behind it. Flakiness expects both.
  for (const Entry& e : lists.entries)
    if (e.mode == Mode::kXfail && !e.expects_flaky() && !e.expect_outcome && !e.expect_message &&
        !e.expect_failing_op)
      lists.problems.push_back({e.where,
                                "an xfail entry without 'expect' accepts any failure: record the "
                                "one it expects (its outcome, a message fragment or the failing "
                                "op)"});
  for (const auto& p : lists.problems) fmt::print("{}\n", p.str());
  for (const auto& n : notes) fmt::print("{}\n", n);
  if (!lists.problems.empty()) {
    fmt::print(stderr, "neuron-conform: skiplist lint: {} problem(s)\n", lists.problems.size());
    return 1;
  }
  fmt::print("skip lists clean: {} active entries\n", lists.entries.size());
  return 0;
}

struct RunView {
  std::string id;
  std::string torch_version;
  std::string backend_module;
  std::vector<std::string> skiplists;  // given, else those the run's backend shipped
  std::vector<std::string> planned;
  std::map<std::string, CaseResult> results;
};

RunView load_run(const SkiplistOptions& o) {
  Store store(o.db, /*create=*/false);
  RunView view;
  view.id = store.resolve_run(o.run);
  const RunInfo run = *store.run(view.id);
  view.torch_version = run.torch_version;
  view.backend_module = run.backend_module;
  view.skiplists = skiplist_paths(o.paths, run.backend_info, run.backend_module);
  view.planned = store.planned(view.id);
  for (auto& r : store.results(view.id)) view.results.emplace(r.case_id, std::move(r));
  return view;
}

// For each entry: the run's planned cases it decides, or whose tolerance it gives (the first
// matching entry of its kind wins).
std::map<std::string, std::vector<std::string>> decided(const Expectations& x, const RunView& run) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : x.entries()) out[e.where.str()];
  for (const auto& id : run.planned) {
    const CaseId c = CaseId::parse(id);
    for (const Entry* e : {x.decide(c), x.tolerance(c)})
      if (e) out[e->where.str()].push_back(id);
  }
  return out;
}

int stats(const SkiplistOptions& o) {
  const RunView run = load_run(o);
  const Skiplists lists = load_skiplists(run.skiplists, run.torch_version);
  std::map<std::string, int> entries;
  for (const auto& e : lists.entries)
    ++entries[fmt::format("{}/{}", name(e.category), name(e.mode))];
  std::map<std::string, int> cases;
  for (const auto& [id, r] : run.results) {
    if (r.evidence.contains("skiplist")) {
      ++cases[r.evidence["skiplist"].value("category", "?") + "/" +
              r.evidence["skiplist"].value("mode", "?")];
    }
  }
  fmt::print("entries by category/mode: {} in all\n", lists.entries.size());
  for (const auto& [k, n] : entries) fmt::print("  {:<28} {}\n", k, n);
  int total = 0;
  for (const auto& [_, n] : cases) total += n;
  fmt::print("cases of run {} decided by an entry: {} of {} planned\n", run.id, total,
             run.planned.size());
  for (const auto& [k, n] : cases) fmt::print("  {:<28} {}\n", k, n);
  return 0;
}

struct Staleness {
  std::vector<const Entry*> stale;  // to remove: nothing they decide fails as expected any more
  std::vector<std::string> why;
  // to review: cases they decide failed otherwise than they record (xfail_changed)
  std::vector<std::pair<const Entry*, std::string>> changed;
};

Staleness find_stale(const Expectations& x, const RunView& run) {
  Staleness out;
  const auto by_entry = decided(x, run);
  for (const auto& e : x.entries()) {
    const auto& ids = by_entry.at(e.where.str());
    if (ids.empty()) {
      out.stale.push_back(&e), out.why.push_back("matched no case of the run");
      continue;
    }
    bool all_pass = e.mode == Mode::kXfail;
    std::size_t changed = 0;
    std::string first_changed;
    for (const auto& id : ids) {
      auto it = run.results.find(id);
      all_pass = all_pass && it != run.results.end() && it->second.outcome == Outcome::kXpass;
      if (it != run.results.end() && it->second.outcome == Outcome::kXfailChanged && !changed++)
        first_changed = fmt::format("{}: {}", id, one_line(case_message(it->second.evidence), 160));
    }
    if (all_pass)
      out.stale.push_back(&e),
          out.why.push_back(fmt::format("all {} case(s) passed (xpass)", ids.size()));
    if (changed > 0)
      out.changed.emplace_back(
          &e, fmt::format("{} of {} case(s) failed otherwise than it records (xfail_changed), "
                          "e.g. {}",
                          changed, ids.size(), first_changed));
  }
  return out;
}

// Entries that expect failures the backend is not to blame for: every case they decided that ran
// failed where the evidence says the harness or the CPU reference could not run it (`where`:
// harness). Such a problem is fixed in the harness, not listed as the backend's.
std::vector<std::pair<const Entry*, std::string>> harness_owned(const Expectations& x,
                                                                const RunView& run) {
  std::vector<std::pair<const Entry*, std::string>> out;
  const auto by_entry = decided(x, run);
  for (const auto& e : x.entries()) {
    std::size_t ran = 0, harness = 0;
    std::string first;
    for (const auto& id : by_entry.at(e.where.str())) {
      const auto it = run.results.find(id);
      if (it == run.results.end() || it->second.outcome != Outcome::kXfail) continue;
      ++ran;
      const Evidence seen = Evidence::read(it->second.evidence);
      if (seen.where != Where::kHarness) continue;
      ++harness;
      if (first.empty()) first = seen.message.substr(0, 160);
    }
    if (ran > 0 && harness == ran)
      out.emplace_back(&e,
                       fmt::format("all {} case(s) it expected to fail failed in the harness or "
                                   "the CPU reference ({})",
                                   ran, first));
  }
  return out;
}

int stale(const SkiplistOptions& o) {
  const RunView run = load_run(o);
  const Skiplists lists = load_skiplists(run.skiplists, run.torch_version);
  const Expectations x(lists.entries);
  const Staleness s = find_stale(x, run);
  for (std::size_t i = 0; i < s.stale.size(); ++i) {
    fmt::print("{}: stale: {} ({}: {})\n", s.stale[i]->where.str(), s.why[i],
               name(s.stale[i]->category), s.stale[i]->reason);
  }
  for (const auto& [entry, why] : s.changed)
    fmt::print("{}: its recorded failure no longer matches: {}\n", entry->where.str(), why);
  const auto owned = harness_owned(x, run);
  for (const auto& [entry, why] : owned)
    fmt::print("{}: the harness's, not the backend's: {}\n", entry->where.str(), why);
  // With the shipped lists, the reviewed facts of the run's suites too: a fact that changes
  // nothing any more is as stale as an entry that matches nothing.
  std::vector<std::pair<std::string, std::string>> facts;
  std::string documents;  // what the summary says of the suites' reviewed documents
  if (o.paths.empty()) {
    std::set<std::string> ran;
    for (const auto& id : run.planned) ran.insert(CaseId::parse(id).suite);
    try {
      for (auto& [suite, problem] : reviewed_problems(found_suites(run.backend_module)))
        if (ran.contains(suite)) facts.emplace_back(std::move(suite), std::move(problem));
      documents = fmt::format(", {} problem(s) in the suites' reviewed documents", facts.size());
    } catch (const std::exception& e) {  // the entries' staleness stands without them
      documents = ", the suites' reviewed documents not read";
      fmt::print(stderr,
                 "neuron-conform: skiplist stale: the suites' reviewed documents were not "
                 "read (the run's backend {}): {}\n",
                 run.backend_module, e.what());
    }
  }
  for (const auto& [suite, problem] : facts)
    fmt::print("suite '{}': reviewed document: {}\n", suite, problem);
  fmt::print(
      "{} stale entr{}, {} whose recorded failure no longer matches, {} the harness's{} "
      "against run {}\n",
      s.stale.size(), s.stale.size() == 1 ? "y" : "ies", s.changed.size(), owned.size(), documents,
      run.id);
  return s.stale.empty() && s.changed.empty() && owned.empty() && facts.empty() ? 0 : 1;
}

int update(const SkiplistOptions& o) {
  const RunView run = load_run(o);
  const Skiplists lists = load_skiplists(run.skiplists, run.torch_version);
  const Expectations x(lists.entries);
  const Staleness s = find_stale(x, run);
  nlohmann::json proposal{
      {"description", fmt::format("Proposed skip-list change from run {}: review, edit the "
                                  "reasons, then apply by hand. Nothing was edited.",
                                  run.id)},
      {"remove", nlohmann::json::array()},
      {"review", nlohmann::json::array()},
      {"add", nlohmann::json::array()}};
  for (std::size_t i = 0; i < s.stale.size(); ++i) {
    proposal["remove"].push_back({{"entry", s.stale[i]->where.str()}, {"why", s.why[i]}});
  }
  for (const auto& [entry, why] : s.changed)  // a new failure behind a known one: not removed
    proposal["review"].push_back({{"entry", entry->where.str()}, {"why", why}});
  for (const auto& id : run.planned) {
    auto it = run.results.find(id);
    if (it == run.results.end() || !is_failure(it->second.outcome)) continue;
    const CaseId c = CaseId::parse(id);
    if (x.decide(c)) continue;
    const CaseResult& r = it->second;
    const Evidence seen = Evidence::read(r.evidence);
    const std::string observed =
        seen.exception_type + (seen.exception_type.empty() ? "" : ": ") +
        (seen.message.empty() ? std::string(name(r.outcome)) : seen.message.substr(0, 200));
    // A crash is never run again; anything else is run and expected to fail the same way.
    const bool crashed = r.outcome == Outcome::kCrash;
    const Category category = crashed                                  ? Category::kCrash
                              : r.evidence.value("unsupported", false) ? Category::kUnsupportedOp
                                                                       : Category::kPrecision;
    nlohmann::json entry{{"suite", c.suite},
                         {"subject", c.subject},
                         {"dtype", c.dtype},
                         {"check", c.check},
                         {"mode", name(crashed ? Mode::kSkip : Mode::kXfail)},
                         {"category", name(category)},
                         {"reason", "EDIT ME: observed " + observed}};
    if (!crashed) {  // the failure it records: a case failing otherwise is news (xfail_changed)
      nlohmann::json expect{{"outcome", r.outcome}};
      const std::string message = r.evidence.value("message", std::string());
      if (const auto first = message.substr(0, std::min<std::size_t>(message.find('\n'), 80));
          !first.empty())
        expect["message"] = first;  // its first line's start: what the entry pins
      if (r.evidence.contains("failing_op")) expect["failing_op"] = r.evidence["failing_op"];
      entry["expect"] = expect;
    }
    proposal["add"].push_back(entry);
  }
  ensure_parent_dir(o.output);
  write_file(o.output, proposal.dump(2) + "\n");
  fmt::print(
      "wrote {}: remove {} stale entr{}, review {} whose recorded failure no longer matches, add "
      "{} for new failures (run {})\n",
      o.output, proposal["remove"].size(), proposal["remove"].size() == 1 ? "y" : "ies",
      proposal["review"].size(), proposal["add"].size(), run.id);
  return 0;
}

// The installed torch, as the helper that speaks PyTorch's test configuration sees it.
std::string helper_torch() {
  return run_helper("pytorch_configs.py", {"--torch-version"}).at("torch").get<std::string>();
}

void print_and_refuse(const Skiplists& lists, const std::string& what) {
  for (const auto& p : lists.problems) fmt::print(stderr, "{}\n", p.str());
  if (!lists.problems.empty())
    throw std::invalid_argument(fmt::format("{} problem(s) in {}", lists.problems.size(), what));
}

// The lists as a Python module that calls PrivateUse1TestBase.set_test_configs
// (docs/pytorch-configs.md).
int export_lists(const SkiplistOptions& o) {
  if (o.format != "pytorch")
    throw std::invalid_argument(fmt::format("unknown --format '{}' (pytorch)", o.format));
  const std::string torch_version = helper_torch();
  const auto paths = skiplist_paths(o.paths, nlohmann::json::object(), o.backend_module);
  const Skiplists lists = load_skiplists(paths, torch_version);
  print_and_refuse(lists, "the skip lists");
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : lists.entries) entries.push_back(entry_json(e));
  const nlohmann::json input{
      {"entries", entries},
      {"source", fmt::format("{} (torch {})", fmt::join(paths, ", "), torch_version)}};
  ensure_parent_dir(o.export_output);
  const auto said = run_helper("pytorch_configs.py", {"--export", o.export_output}, input.dump());
  fmt::print(
      "wrote {}: {} entries as {} op_overrides and {} test_exclusions; {} of suites PyTorch "
      "does not run kept in NEURON_CONFORM_ENTRIES only\n",
      o.export_output, entries.size(), said.value("op_overrides", 0),
      said.value("test_exclusions", 0), said.value("unexpressed", 0));
  return 0;
}

// A module that configures PyTorch's test base, read back into a list file (checked as any).
int import_lists(const SkiplistOptions& o) {
  const auto got = run_helper("pytorch_configs.py", {"--import", o.module});
  const nlohmann::json document{
      {"description", fmt::format("Imported by neuron-conform skiplist import from {}", o.module)},
      {"entries", got.at("entries")}};
  ensure_parent_dir(o.import_output);
  write_file(o.import_output, document.dump(2) + "\n");
  const Skiplists lists = load_skiplists({o.import_output}, got.value("torch", std::string("0")));
  print_and_refuse(lists, o.import_output);
  fmt::print("wrote {}: {} entries from {}\n", o.import_output, document["entries"].size(),
             o.module);
  return 0;
}

}  // namespace

int skiplist_command(const SkiplistOptions& o) {
  if (o.action == "lint") return lint(o);
  if (o.action == "stats") return stats(o);
  if (o.action == "stale") return stale(o);
  if (o.action == "update") return update(o);
  if (o.action == "export") return export_lists(o);
  if (o.action == "import") return import_lists(o);
  throw std::invalid_argument(fmt::format(
      "unknown skiplist action '{}' (lint, stats, stale, update, export, import)", o.action));
}

Command add_skiplist_command(CLI::App& cli) {
  auto o = std::make_shared<SkiplistOptions>();
  auto* cmd = cli.add_subcommand("skiplist", "Check and maintain skip lists");
  cmd->require_subcommand(1);
  auto add_paths = [o](CLI::App* sub) {
    sub->add_option("paths", o->paths,
                    "Skip-list files or directories (default: those the backend ships, entry-point "
                    "group neuron_conform.skiplists)");
  };
  auto add_run = [o](CLI::App* sub) {
    sub->add_option("--db", o->db, "Results database")->capture_default_str();
    sub->add_option("--run", o->run, "Run (id, latest, previous)")->capture_default_str();
  };
  auto* lint_cmd = cmd->add_subcommand(
      "lint",
      "Report JSON errors (file:line:column), unknown fields, missing reasons, unknown categories, "
      "subjects that name no case of the suites their entries name (each listed once), duplicate "
      "and shadowed entries, xfail entries that record no expected failure ('expect'); exit 1 on "
      "any. Without paths: the lists the backend ships, every suite's own "
      "(<suite>/not_runnable.json) and every reviewed document the suites read (facts about ops, "
      "tables of models: a wrong entry, or a fact that changes nothing, is a problem)");
  add_paths(lint_cmd);
  lint_cmd->add_option(
      "--suite", o->suite,
      "Suite for the entries whose suite is '*' (its torch selects active entries); "
      "default: the default suite of `run`");
  lint_cmd->add_option("--backend-module", o->backend_module, "Backend the listing worker imports")
      ->capture_default_str();
  lint_cmd->add_flag("!--no-subject-check", o->check_subjects,
                     "Skip checking subjects against the suites");
  auto* stats_cmd =
      cmd->add_subcommand("stats", "Entries and the run's decided cases by category and mode");
  add_paths(stats_cmd);
  add_run(stats_cmd);
  auto* stale_cmd = cmd->add_subcommand(
      "stale",
      "Entries whose cases all passed (xpass) or that matched nothing, entries whose recorded "
      "failure no longer matches (xfail_changed), and entries that are the "
      "harness's rather than the backend's (every case they expected to fail failed in the "
      "harness or the CPU reference, evidence `where: harness`); without paths, also what is "
      "wrong in the reviewed documents of the run's suites (a fact about an op that changes "
      "nothing any more): exit 1 when there is any");
  add_paths(stale_cmd);
  add_run(stale_cmd);
  auto* update_cmd = cmd->add_subcommand("update",
                                         "Write a proposal (remove stale entries, review those "
                                         "whose recorded failure changed, add entries for new "
                                         "failures, each with the failure it expects) for review; "
                                         "edits nothing");
  add_paths(update_cmd);
  add_run(update_cmd);
  update_cmd->add_option("-o,--output", o->output, "Proposal file")->capture_default_str();
  auto* export_cmd = cmd->add_subcommand(
      "export",
      "Write the lists as a Python module for PyTorch's own test runner: it calls "
      "PrivateUse1TestBase.set_test_configs(op_overrides=..., test_exclusions=...) (ops-suite "
      "entries as DecorateInfo skips and expected failures of the matching test_ops.py tests, "
      "upstream-suite entries as exclusions); import it before the test files "
      "(docs/pytorch-configs.md)");
  add_paths(export_cmd);
  export_cmd->add_option("--format", o->format, "pytorch")
      ->capture_default_str()
      ->check(CLI::IsMember({"pytorch"}));
  export_cmd->add_option("-o,--output", o->export_output, "Module to write")->capture_default_str();
  export_cmd
      ->add_option("--backend-module", o->backend_module, "Backend whose lists are the default")
      ->capture_default_str();
  auto* import_cmd = cmd->add_subcommand(
      "import",
      "Read a module that calls PrivateUse1TestBase.set_test_configs (one `export` wrote, or one "
      "written by hand) back into a skip-list file, checked like any");
  import_cmd->add_option("module", o->module, "The Python module")
      ->required()
      ->check(CLI::ExistingFile);
  import_cmd->add_option("-o,--output", o->import_output, "List file to write")
      ->capture_default_str();
  for (auto* sub : {lint_cmd, stats_cmd, stale_cmd, update_cmd, export_cmd, import_cmd})
    sub->callback([o, sub] { o->action = sub->get_name(); });
  return {cmd, [o] { return skiplist_command(*o); }, 2};
}

}  // namespace conform
