#include "record/RunInfo.h"

#include <ctime>
#include <iomanip>
#include <sstream>

namespace conform {
namespace {

using nlohmann::json;

// Seconds between two of Store::now_utc()'s timestamps, or null when either is missing.
json seconds_between(const std::string& from, const std::optional<std::string>& to) {
  if (!to) return nullptr;
  auto parse = [](const std::string& t) -> std::optional<double> {
    std::tm tm{};
    std::istringstream in(t);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
    if (in.fail()) return std::nullopt;
    double ms = 0;
    if (t.size() > 20 && t[19] == '.') ms = std::stod(t.substr(20, 3));
    return static_cast<double>(timegm(&tm)) + ms / 1000.0;
  };
  const auto a = parse(from), b = parse(*to);
  if (!a || !b) return nullptr;
  return *b - *a;
}

}  // namespace

json run_json(const RunInfo& run) {
  return {{"id", run.id},
          {"suite", run.suite},
          {"status", run.status},
          {"label", run.label ? json(*run.label) : json()},
          {"started_at", run.started_at},
          {"ended_at", run.ended_at ? json(*run.ended_at) : json()},
          {"duration_seconds", seconds_between(run.started_at, run.ended_at)},
          {"seed", run.seed},
          {"host", run.host},
          {"torch", run.torch_version},
          {"backend_module", run.backend_module},
          {"backend_version", run.backend_version},
          {"harness_version", run.harness_version},
          {"device", run.device},
          {"shard", run.shard ? json(*run.shard) : json()},
          {"command", run.command}};
}

}  // namespace conform
