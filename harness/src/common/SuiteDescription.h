#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace conform {

// What a suite says of itself when it lists its cases (its suite.py's SUITE,
// suite_api.Suite.describe()), stored with every run so that a run's reports render from what that
// run declared. Reports know no suite by name: everything suite-specific they show comes from here.
struct SuiteDescription {
  struct Check {
    std::string name;
    std::string meaning;
  };
  // A named subset of subjects with a headline of its own (hf's most-used architectures).
  struct Headline {
    std::string name;   // "most_used"
    std::string title;  // "most-used": "N of M most-used <nouns> <native phrase>"
    std::vector<std::string> subjects;
  };

  // An option the suite takes (run --suite-option NAME=VALUE): the worker types and checks the
  // values against these before any case (harness/worker/suite_api.py).
  struct Option {
    std::string name;
    std::string type;              // int, float, str, bool, path
    nlohmann::json default_value;  // null: none
    std::string help;
    bool required = false;
  };

  std::string suite;
  std::string noun = "subject";    // one subject: "OpInfo", "architecture", "module"
  std::string nouns = "subjects";  // in sentences: "OpInfos", "causal-LM architectures"
  std::vector<Check> checks;
  // A subject runs natively when every case of these checks passes natively.
  std::set<std::string> native_checks;
  std::string native_phrase = "run natively at every dtype and check";
  std::vector<Headline> headlines;
  // Its -j workers split the cores (OMP_NUM_THREADS = cores / jobs, unless the environment sets
  // it) instead of each running a pool of every core, which oversubscribes them: for suites
  // whose cases run many small ops. Off by default: a suite's expectations were reviewed under
  // the thread count it ran with, and reductions' results depend on it.
  bool share_cores = false;
  std::vector<Option> options;
  // Whether the nightly (ci/nightly.sh, the nightly workflow) runs the suite, in how many shards,
  // with which --suite-option values.
  struct Nightly {
    bool runs = true;
    int shards = 1;
    nlohmann::json options = nlohmann::json::object();  // NAME -> value
  };
  Nightly nightly;
  // The suite's own skip list: the cases no device can run (<folder>/not_runnable.json, category
  // not_runnable), applied before and apart from the backend's. Empty: none. A path on the host
  // that listed the suite, so reports do not show it (to_json leaves it out).
  std::string own_skiplist;

  // Validates a suite's declaration; throws std::invalid_argument naming the suite and field.
  static SuiteDescription from_json(const std::string& suite, const nlohmann::json& j);
  // A run recorded without a declaration: every check counts, subjects are "subjects".
  static SuiteDescription undeclared(const std::string& suite,
                                     const std::set<std::string>& checks_seen);
  // The declaration of a run: the stored one, else undeclared() over the checks it recorded.
  static SuiteDescription of_run(const std::string& suite, const nlohmann::json& stored,
                                 const std::set<std::string>& checks_seen);
  nlohmann::json to_json() const;

  bool has_check(const std::string& check) const;
  // "N of M <title> <nouns> <native phrase>".
  std::string native_sentence(std::int64_t n, std::int64_t m, const std::string& title = "") const;
};

}  // namespace conform
