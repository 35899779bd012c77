#include "engine/Options.h"

#include <atomic>

namespace neuronsim::engine {
namespace {

struct Modes {
  std::atomic<FallbackMode> fallback;
  std::atomic<Wide64Mode> wide64;
  std::atomic<MatmulMode> matmul;
};

Modes& modes() {
  static Modes m{config().fallback, config().wide64, config().matmul};
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

}  // namespace neuronsim::engine
