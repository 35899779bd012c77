#include "runtime/HostAllocator.h"

#include "runtime/Device.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>

namespace neuronsim {
namespace {
constexpr std::size_t kAlignment = 64;
}

HostAllocator& HostAllocator::instance() {
  static HostAllocator allocator;
  return allocator;
}

at::DataPtr HostAllocator::allocate(std::size_t nbytes) {
  if (nbytes == 0) return {nullptr, nullptr, &delete_block, at::Device(at::kCPU)};
  const std::size_t size = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, size);
  TORCH_CHECK_WITH(OutOfMemoryError, data != nullptr, "failed to allocate ", nbytes,
                   " bytes of pinned host memory for neuron");
  std::lock_guard lock(mutex_);
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  ranges_[start] = start + size;
  stats_.allocations.increase(1);
  stats_.active_requests.increase(1);
  stats_.allocated_bytes.increase(size);
  stats_.active_bytes.increase(size);
  ++stats_.num_host_alloc;
  return {data, data, &delete_block, at::Device(at::kCPU)};
}

void HostAllocator::delete_block(void* ptr) noexcept {
  instance().release(ptr);
}

void HostAllocator::release(void* ptr) noexcept {
  if (ptr == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    auto it = ranges_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == ranges_.end()) return;
    const std::size_t size = it->second - it->first;
    ranges_.erase(it);
    stats_.allocations.decrease(1);
    stats_.active_requests.decrease(1);
    stats_.allocated_bytes.decrease(size);
    stats_.active_bytes.decrease(size);
    ++stats_.num_host_free;
  }
  std::free(ptr);
}

at::DeleterFnPtr HostAllocator::raw_deleter() const {
  return &delete_block;
}

void HostAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}

bool HostAllocator::record_event(void*, void*, c10::Stream) {
  // Synchronous execution: a pinned buffer is never still in use by the device when freed.
  return true;
}

at::HostStats HostAllocator::get_stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

void HostAllocator::reset_accumulated_stats() {
  std::lock_guard lock(mutex_);
  for (auto* stat : {&stats_.allocations, &stats_.active_requests, &stats_.allocated_bytes,
                     &stats_.active_bytes}) {
    stat->reset_accumulated();
  }
  stats_.num_host_alloc = 0;
  stats_.num_host_free = 0;
}

void HostAllocator::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  for (auto* stat : {&stats_.allocations, &stats_.active_requests, &stats_.allocated_bytes,
                     &stats_.active_bytes}) {
    stat->reset_peak();
  }
}

bool HostAllocator::is_pinned(const void* ptr) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard lock(mutex_);
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return false;
  --it;
  return address < it->second;
}

REGISTER_HOST_ALLOCATOR(kDeviceType, &HostAllocator::instance())

}  // namespace neuronsim
