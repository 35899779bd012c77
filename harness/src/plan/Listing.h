#pragma once

#include "common/CaseId.h"
#include "common/SuiteDescription.h"
#include "execute/Worker.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace conform {

// What a suite offers, as one worker (started with --list) reports it: what the suite declares
// of itself, its cases, and what that worker said about itself (torch and backend versions,
// start-up time).
struct Listing {
  std::string suite;  // as the worker named it (the default suite when none was asked for)
  nlohmann::json hello;
  SuiteDescription description;
  nlohmann::json description_json;  // as declared, stored with the run
  // The run's suite options as the suite resolved them: every declared option, typed, defaults
  // filled in, paths absolute (stored with the run, for --resume and repro).
  nlohmann::json options = nlohmann::json::object();
  std::vector<CaseId> cases;
};

// `suite` empty: the worker's default suite. Throws std::runtime_error with the worker's own
// one-line reason when it cannot start (for example an unimportable backend module), and
// std::invalid_argument when the suite's declaration is malformed or a case names a check the suite
// does not declare.
Listing list_suite(const std::string& suite, const WorkerCommand& command,
                   const std::string& log_path);
// The same from a listing worker already started (one a zygote forked in mode "list").
Listing list_suite(const std::string& suite, Worker& worker);

// Every suite a worker started with --suites finds (NEURON_CONFORM_SUITES, then the project's
// suites/), with its declaration, or why it cannot be loaded. Throws std::runtime_error as
// list_suite does.
struct FoundSuite {
  std::string name;
  std::string folder;
  std::optional<SuiteDescription> description;
  std::string problem;  // why it has no valid description
  // The reviewed documents its modules read (their readers, suitelib/reviewed.py), and what is
  // wrong in them: `skiplist lint` reports these with the skip lists.
  std::vector<std::string> reviewed_readers, reviewed_problems;
};
// `check_reviewed`: read every reviewed document too (seconds), for reviewed_problems.
std::vector<FoundSuite> find_suites(const WorkerCommand& command, const std::string& log_path,
                                    bool check_reviewed = false);

// The installed torch's aten overloads with a CPU kernel (harness/worker/overloads.py), as a
// worker started with --overloads reports them, and its torch version. Throws
// std::runtime_error as list_suite does.
struct Overloads {
  std::string torch_version;
  std::vector<std::string> names;
  std::vector<std::string> composite;  // served by a composite kernel on the device
};
Overloads list_overloads(const WorkerCommand& command, const std::string& log_path);

// The public API a suite's subjects test (the suite's public_api(),
// harness/worker/suitelib/public_api.py):
// {"mode", "subjects"}, or null when the suite declares none. Throws std::runtime_error as
// list_suite does.
nlohmann::json list_public_api(const WorkerCommand& command, const std::string& log_path);

// The folders of skip lists the backend's distribution ships (entry-point group
// `neuron_conform.skiplists`, harness/worker/backend_files.py), found without importing the
// backend; empty when it ships none. Throws std::runtime_error when an entry names no folder.
std::vector<std::string> backend_skiplists(const std::string& backend_module);

// The skip lists a command applies: `given` (--skiplists) when not empty, else those a run
// recorded its backend ships (`backend_info.skiplists`), else those the backend ships now.
std::vector<std::string> skiplist_paths(const std::vector<std::string>& given,
                                        const nlohmann::json& backend_info,
                                        const std::string& backend_module);

}  // namespace conform
