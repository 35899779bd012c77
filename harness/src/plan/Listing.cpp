#include "plan/Listing.h"

#include "common/Environment.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

namespace {

// The next protocol line of a listing worker as a JSON object; throws with the worker's own
// reason (a "fatal" line, its stderr when it ended early).
nlohmann::json next_line(Worker& worker) {
  std::string line;
  const auto read = worker.read_line(std::chrono::minutes(10), line);
  if (read == Worker::Read::kTimeout) {
    worker.kill();
    throw std::runtime_error("the listing worker produced nothing for 10 minutes");
  }
  if (read == Worker::Read::kEof) {
    const auto status = worker.wait();
    throw std::runtime_error(
        fmt::format("the listing worker {} before finishing; its stderr ends with:\n{}",
                    status.describe(), worker.stderr_tail(1500)));
  }
  if (read == Worker::Read::kTooLong)
    throw std::runtime_error(fmt::format(
        "the listing worker wrote a line longer than the protocol's limit of {} MiB: {}...",
        kMaxLineBytes >> 20, line.substr(0, 200)));
  auto json = nlohmann::json::parse(line, nullptr, false);
  if (!json.is_object())
    throw std::runtime_error("the listing worker wrote a line that is not JSON: " + line);
  if (json.contains("fatal")) throw std::runtime_error(json["fatal"].get<std::string>());
  return json;
}

}  // namespace

Listing list_suite(const std::string& suite, const WorkerCommand& command,
                   const std::string& log_path) {
  Worker worker(command, "--list", log_path);
  return list_suite(suite, worker);
}

Listing list_suite(const std::string& suite, Worker& worker) {
  Listing listing;
  listing.suite = suite;
  while (true) {
    const nlohmann::json json = next_line(worker);
    if (json.contains("ready")) {
      listing.hello = json;
    } else if (json.contains("description")) {
      listing.suite = json.value("suite", suite);
      listing.description_json = json["description"];
      listing.description = SuiteDescription::from_json(listing.suite, listing.description_json);
      listing.options = json.value("options", nlohmann::json::object());
    } else if (json.contains("done")) {
      break;
    } else {
      if (listing.description_json.is_null())
        throw std::invalid_argument(fmt::format(
            "suite '{}' listed a case before describing itself (the worker is outdated)",
            listing.suite));
      CaseId id = CaseId::parse(json.at("id").get<std::string>());
      if (!listing.description.has_check(id.check))
        throw std::invalid_argument(fmt::format(
            "suite '{}' lists case {} whose check '{}' it does not declare (suite_api.check)",
            listing.suite, id.str(), id.check));
      listing.cases.push_back(std::move(id));
    }
  }
  return listing;
}

std::vector<FoundSuite> find_suites(const WorkerCommand& command, const std::string& log_path,
                                    bool check_reviewed) {
  Worker worker(command, check_reviewed ? "--reviewed" : "--suites", log_path);
  std::vector<FoundSuite> found;
  for (nlohmann::json json = next_line(worker); !json.contains("done"); json = next_line(worker)) {
    if (json.contains("ready")) continue;
    FoundSuite suite;
    suite.name = json.at("suite").get<std::string>();
    suite.folder = json.value("folder", "");
    suite.problem = json.value("problem", "");
    if (const auto reviewed = json.find("reviewed"); reviewed != json.end()) {
      suite.reviewed_readers = reviewed->value("readers", std::vector<std::string>());
      suite.reviewed_problems = reviewed->value("problems", std::vector<std::string>());
    }
    if (json.contains("description")) {
      try {
        suite.description = SuiteDescription::from_json(suite.name, json["description"]);
      } catch (const std::invalid_argument& e) {
        suite.problem = e.what();
      }
    }
    found.push_back(std::move(suite));
  }
  worker.close_input();
  worker.wait();
  return found;
}

Overloads list_overloads(const WorkerCommand& command, const std::string& log_path) {
  Worker worker(command, "--overloads", log_path);
  Overloads out;
  while (true) {
    const nlohmann::json json = next_line(worker);
    if (json.contains("ready")) out.torch_version = json.value("torch", "unknown");
    if (json.contains("overloads")) {
      out.names = json["overloads"].get<std::vector<std::string>>();
      out.composite = json.value("device_composite", std::vector<std::string>());
      break;
    }
  }
  worker.close_input();
  worker.wait();
  return out;
}

nlohmann::json list_public_api(const WorkerCommand& command, const std::string& log_path) {
  Worker worker(command, "--api", log_path);
  nlohmann::json json = next_line(worker);
  while (!json.contains("api")) json = next_line(worker);
  worker.close_input();
  worker.wait();
  return json["api"];
}

std::vector<std::string> backend_skiplists(const std::string& backend_module) {
  const ScratchLog log("backend-files");
  const WorkerCommand command{python_executable(),
                              data_root() + "/harness/worker/backend_files.py",
                              {"--backend-module", backend_module},
                              {},
                              0};
  Worker worker(command, "--skiplists", log.path());
  const nlohmann::json json = next_line(worker);
  worker.close_input();
  worker.wait();
  return json.value("skiplists", std::vector<std::string>());
}

std::vector<std::string> skiplist_paths(const std::vector<std::string>& given,
                                        const nlohmann::json& backend_info,
                                        const std::string& backend_module) {
  if (!given.empty()) return given;
  if (backend_info.contains("skiplists"))
    return backend_info["skiplists"].get<std::vector<std::string>>();
  return backend_skiplists(backend_module);
}

}  // namespace conform
