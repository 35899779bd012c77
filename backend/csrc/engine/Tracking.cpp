#include "engine/Tracking.h"

#include "engine/CallKey.h"

#include <c10/util/flat_hash_map.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace neuronsim::engine {
namespace {

// One counter per operator and route, created once and never freed, so the hot path is a
// thread-local lookup and an atomic increment; clearing resets the counts to zero.
struct Counter {
  explicit Counter(const c10::OperatorHandle& handle) : op(handle) {}
  c10::OperatorHandle op;
  std::atomic<std::int64_t> calls{0};
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<const c10::FunctionSchema*, std::unique_ptr<Counter>> counters;
};

Registry& native_registry() {
  static Registry r;
  return r;
}
Registry& fallback_registry() {
  static Registry r;
  return r;
}

Counter& counter(Registry& registry, const c10::OperatorHandle& op) {
  std::lock_guard lock(registry.mutex);
  auto& slot = registry.counters[&op.schema()];
  if (!slot) slot = std::make_unique<Counter>(op);
  return *slot;
}

// Per thread, the counter of each operator seen: a hit is one flat-map lookup and an atomic
// increment, no lock.
template <Registry& (*registry)()>
void record(const c10::OperatorHandle& op) {
  thread_local ska::flat_hash_map<const c10::FunctionSchema*, Counter*> mine;
  Counter*& slot = mine[&op.schema()];
  if (slot == nullptr) slot = &counter(registry(), op);
  slot->calls.fetch_add(1, std::memory_order_relaxed);
}

std::map<std::string, std::int64_t> named(Registry& registry) {
  std::lock_guard lock(registry.mutex);
  std::map<std::string, std::int64_t> out;
  for (const auto& [schema, counter] : registry.counters) {
    if (const auto calls = counter->calls.load(); calls > 0)
      out[overload_name(counter->op)] += calls;
  }
  return out;
}

void reset(Registry& registry) {
  std::lock_guard lock(registry.mutex);
  for (auto& [schema, counter] : registry.counters) counter->calls.store(0);
}

}  // namespace

void record_native(const c10::OperatorHandle& op) {
  record<native_registry>(op);
}
std::atomic<std::int64_t>& native_counter(const c10::OperatorHandle& op) {
  return counter(native_registry(), op).calls;
}
void record_fallback(const c10::OperatorHandle& op) {
  record<fallback_registry>(op);
}
std::map<std::string, std::int64_t> executed_ops() {
  return named(native_registry());
}
std::map<std::string, std::int64_t> fallback_ops() {
  return named(fallback_registry());
}

void clear_op_tracking() {
  reset(native_registry());
  reset(fallback_registry());
}

}  // namespace neuronsim::engine
