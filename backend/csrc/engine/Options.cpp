#include "engine/Options.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace neuronsim::engine {
namespace {

struct Modes {
  std::atomic<FallbackMode> fallback;
  std::atomic<Wide64Mode> wide64;
  std::atomic<MatmulMode> matmul;
  std::mutex latency_mutex;  // two doubles: read and written together
  CompileLatency latency;
};

Modes& modes() {
  static Modes m{config().fallback, config().wide64, config().matmul, {}, config().compile_latency};
  return m;
}

}  // namespace

FallbackMode fallback_mode() {
  return modes().fallback.load(std::memory_order_relaxed);
}
Wide64Mode wide64_mode() {
  return modes().wide64.load(std::memory_order_relaxed);
}
MatmulMode matmul_mode() {
  return modes().matmul.load(std::memory_order_relaxed);
}
void set_fallback_mode(FallbackMode mode) {
  modes().fallback.store(mode);
}
void set_wide64_mode(Wide64Mode mode) {
  modes().wide64.store(mode);
}
void set_matmul_mode(MatmulMode mode) {
  modes().matmul.store(mode);
}
CompileLatency compile_latency() {
  std::lock_guard lock(modes().latency_mutex);
  return modes().latency;
}
void set_compile_latency(CompileLatency latency) {
  std::lock_guard lock(modes().latency_mutex);
  modes().latency = latency;
}
double emulate_compile(long long ops) {
  const double seconds = compile_latency().seconds_for(ops);
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return seconds;
}

}  // namespace neuronsim::engine
