#include "distributed/CollectiveStats.h"

#include <mutex>

namespace neuronsim::distributed {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, CollectiveCount> counts;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void record_collective(const std::string& name, std::int64_t bytes) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& count = r.counts[name];
  ++count.calls;
  count.bytes += bytes;
}

std::map<std::string, CollectiveCount> collective_stats() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.counts;
}

void clear_collective_stats() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.counts.clear();
}

}  // namespace neuronsim::distributed
