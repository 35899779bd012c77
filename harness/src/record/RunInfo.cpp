#include "record/RunInfo.h"

#include <fmt/format.h>

#include <ctime>
#include <iomanip>
#include <sstream>
#include <stdexcept>

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

template <typename T>
T field(const json& record, const char* key) {
  if (!record.contains(key)) throw std::invalid_argument(fmt::format("no field '{}'", key));
  try {
    return record.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(
        fmt::format("field '{}' is {}, not what a run holds there", key, record.at(key).dump()));
  }
}

template <typename T>
std::optional<T> optional_field(const json& record, const char* key) {
  if (!record.contains(key) || record.at(key).is_null()) return std::nullopt;
  return field<T>(record, key);
}

json object_field(const json& record, const char* key) {
  const json value = record.value(key, json::object());
  if (!value.is_object())
    throw std::invalid_argument(fmt::format("field '{}' is not an object", key));
  return value;
}

}  // namespace

RunInfo run_from_json(const json& record) {
  if (!record.is_object()) throw std::invalid_argument("a run record is a JSON object");
  RunInfo run;
  run.id = field<std::string>(record, "id");
  run.suite = field<std::string>(record, "suite");
  run.status = field<std::string>(record, "status");
  if (!find_named(kRunStatuses, run.status))
    throw std::invalid_argument(fmt::format("status '{}' is no run status", run.status));
  run.started_at = field<std::string>(record, "started_at");
  run.ended_at = optional_field<std::string>(record, "ended_at");
  run.label = optional_field<std::string>(record, "label");
  run.seed = field<std::int64_t>(record, "seed");
  run.host = field<std::string>(record, "host");
  run.torch_version = field<std::string>(record, "torch");
  run.backend_module = field<std::string>(record, "backend_module");
  run.backend_version = field<std::string>(record, "backend_version");
  run.harness_version = field<std::string>(record, "harness_version");
  run.device = field<std::string>(record, "device");
  run.shard = optional_field<std::string>(record, "shard");
  run.command = field<std::string>(record, "command");
  run.backend_info = object_field(record, "backend_info");
  run.suite_info = object_field(record, "suite_info");
  run.suite_options = object_field(record, "suite_options");
  return run;
}

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
