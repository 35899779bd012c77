#include "plan/Listing.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

Listing list_suite(const WorkerCommand& command, const std::string& log_path) {
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
    } else if (json.contains("done")) {
      break;
    } else {
      listing.cases.push_back(CaseId::parse(json.at("id").get<std::string>()));
    }
  }
  return listing;
}

}  // namespace conform
