#pragma once

#include <ATen/core/CachingHostAllocator.h>

#include <cstdint>
#include <map>
#include <mutex>

namespace neuronsim {

// Pinned (page-locked) host memory for `pin_memory()`. The emulated device reads host memory
// directly, so pinning is bookkeeping: which host ranges were allocated here, for
// `is_pinned()`, plus exact statistics.
class HostAllocator final : public at::HostAllocator {
 public:
  static HostAllocator& instance();

  at::DataPtr allocate(std::size_t nbytes) override;
  at::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  bool record_event(void* ptr, void* ctx, c10::Stream stream) override;
  void empty_cache() override {}
  at::HostStats get_stats() override;
  void reset_accumulated_stats() override;
  void reset_peak_stats() override;

  bool is_pinned(const void* ptr) const;

 private:
  HostAllocator() = default;
  static void delete_block(void* ptr) noexcept;
  void release(void* ptr) noexcept;

  mutable std::mutex mutex_;
  std::map<std::uintptr_t, std::uintptr_t> ranges_;  // start -> end
  at::HostStats stats_;
};

}  // namespace neuronsim
