#include "engine/Tracking.h"

#include <mutex>
#include <unordered_map>

namespace neuronsim::engine {
namespace {

struct Counters {
  std::mutex mutex;
  std::unordered_map<std::string, std::int64_t> native;
  std::unordered_map<std::string, std::int64_t> fallback;
};

Counters& counters() {
  static Counters c;
  return c;
}

std::map<std::string, std::int64_t> sorted(const std::unordered_map<std::string, std::int64_t>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

void record_native(const std::string& op) {
  std::lock_guard lock(counters().mutex);
  ++counters().native[op];
}

void record_fallback(const std::string& op) {
  std::lock_guard lock(counters().mutex);
  ++counters().fallback[op];
}

std::map<std::string, std::int64_t> executed_ops() {
  std::lock_guard lock(counters().mutex);
  return sorted(counters().native);
}

std::map<std::string, std::int64_t> fallback_ops() {
  std::lock_guard lock(counters().mutex);
  return sorted(counters().fallback);
}

void clear_op_tracking() {
  std::lock_guard lock(counters().mutex);
  counters().native.clear();
  counters().fallback.clear();
}

}  // namespace neuronsim::engine
