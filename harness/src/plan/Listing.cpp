#include "plan/Listing.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

Listing list_suite(const std::string& suite, const WorkerCommand& command,
                   const std::string& log_path) {
  Worker worker(command, "--list", log_path);
  Listing listing;
  std::string line;
  const auto timeout = std::chrono::minutes(10);
  while (true) {
    const auto read = worker.read_line(timeout, line);
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
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_object())
      throw std::runtime_error("the listing worker wrote a line that is not JSON: " + line);
    if (json.contains("fatal")) throw std::runtime_error(json["fatal"].get<std::string>());
    if (json.contains("ready")) {
      listing.hello = json;
    } else if (json.contains("description")) {
      listing.description_json = json["description"];
      listing.description = SuiteDescription::from_json(suite, listing.description_json);
    } else if (json.contains("done")) {
      break;
    } else {
      if (listing.description_json.is_null())
        throw std::invalid_argument(fmt::format(
            "suite '{}' listed a case before describing itself (the worker is outdated)", suite));
      CaseId id = CaseId::parse(json.at("id").get<std::string>());
      if (!listing.description.has_check(id.check))
        throw std::invalid_argument(fmt::format(
            "suite '{}' lists case {} whose check '{}' its describe_suite() does not declare",
            suite, id.str(), id.check));
      listing.cases.push_back(std::move(id));
    }
  }
  return listing;
}

}  // namespace conform
