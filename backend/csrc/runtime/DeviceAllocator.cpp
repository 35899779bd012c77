#include "runtime/DeviceAllocator.h"

#include "runtime/Config.h"
#include "runtime/Device.h"
#include "runtime/Executor.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace neuronsim {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;
constexpr auto kAll = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
constexpr std::size_t kAlignment = 64;

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.2f %s", value, kUnits[unit]);
  return text;
}

}  // namespace

DeviceAllocator& DeviceAllocator::instance() {
  static DeviceAllocator allocator;
  return allocator;
}

std::size_t DeviceAllocator::round_size(std::size_t nbytes) {
  if (nbytes < kBlockRounding) return kBlockRounding;
  return (nbytes + kBlockRounding - 1) / kBlockRounding * kBlockRounding;
}

DeviceAllocator::Pool& DeviceAllocator::pool(c10::DeviceIndex device) {
  std::call_once(pools_once_, [this] {
    for (int i = 0; i < kMaxDevices; ++i) pools_.push_back(std::make_unique<Pool>());
  });
  check_device_index(device);
  return *pools_[static_cast<std::size_t>(device)];
}

void DeviceAllocator::reserve_locked(c10::DeviceIndex device, Pool& p,
                                     std::unique_lock<std::mutex>& lock, std::size_t size,
                                     std::size_t requested) {
  auto& stats = p.stats;
  const std::uint64_t capacity = config().device_memory;
  auto reserved = static_cast<std::uint64_t>(stats.reserved_bytes[kAll].current);
  if (reserved + size > capacity && release_cache_to_retry_locked(device, p))
    reserved = static_cast<std::uint64_t>(stats.reserved_bytes[kAll].current);
  if (reserved + size <= capacity) {
    stats.reserved_bytes[kAll].increase(size);
    stats.segment[kAll].increase(1);
    ++stats.num_device_alloc;
    return;
  }
  ++stats.num_ooms;
  const auto in_use = static_cast<std::uint64_t>(stats.allocated_bytes[kAll].current);
  lock.unlock();
  TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron:", static_cast<int>(device),
                   " out of memory: tried to allocate ", format_bytes(requested), " (", requested,
                   " bytes); ", format_bytes(in_use), " is in use by tensors, ",
                   format_bytes(reserved), " reserved, device capacity ", format_bytes(capacity),
                   " (NEURONSIM_DEVICE_MEMORY=", capacity,
                   "). Free tensors you no longer need, call torch.neuron.empty_cache(), "
                   "or raise NEURONSIM_DEVICE_MEMORY.");
}

void DeviceAllocator::count_live_locked(Pool& p, std::size_t size, std::size_t requested) {
  auto& stats = p.stats;
  stats.allocation[kAll].increase(1);
  stats.active[kAll].increase(1);
  stats.allocated_bytes[kAll].increase(size);
  stats.active_bytes[kAll].increase(size);
  stats.requested_bytes[kAll].increase(requested);
}

void DeviceAllocator::uncount_live_locked(Pool& p, std::size_t size, std::size_t requested) {
  auto& stats = p.stats;
  stats.allocation[kAll].decrease(1);
  stats.active[kAll].decrease(1);
  stats.allocated_bytes[kAll].decrease(size);
  stats.active_bytes[kAll].decrease(size);
  stats.requested_bytes[kAll].decrease(requested);
}

c10::DataPtr DeviceAllocator::allocate(std::size_t nbytes) {
  ensure_initialized();
  const c10::DeviceIndex device = current_device();
  const c10::Device where(kDeviceType, device);
  if (nbytes == 0) return {nullptr, nullptr, &delete_block, where};

  Pool& p = pool(device);
  const std::size_t size = round_size(nbytes);
  std::unique_lock lock(p.mutex);

  std::unique_ptr<Block> block;
  if (auto it = p.cached.find(size); it != p.cached.end() && !it->second.empty()) {
    block = std::move(it->second.back());
    it->second.pop_back();
  } else {
    reserve_locked(device, p, lock, size, nbytes);
    HostBuffer buffer = back_with_host_memory(device, p, size);
    if (buffer == nullptr) {
      const int host_error = errno;
      p.stats.reserved_bytes[kAll].decrease(size);
      p.stats.segment[kAll].decrease(1);
      lock.unlock();
      // Not the device's own capacity but the host's (a process memory limit): the message says
      // so in the C library's words, which a harness matches to tell the two apart.
      TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron:", static_cast<int>(device),
                       " out of memory: the host refused to back an allocation of ",
                       format_bytes(nbytes), " (", std::strerror(host_error), ")");
    }
    register_range(buffer.get(), size, device);
    block = std::make_unique<Block>();
    block->buffer = std::move(buffer);
    block->size = size;
    block->device = device;
  }
  block->requested = nbytes;
  block->holders.store(1, std::memory_order_relaxed);
  count_live_locked(p, size, nbytes);
  void* data = block->buffer.get();
  return {data, block.release(), &delete_block, where};
}

c10::DataPtr DeviceAllocator::adopt(c10::DataPtr host, std::size_t nbytes,
                                    c10::DeviceIndex device) {
  ensure_initialized();
  Pool& p = pool(device);
  const std::size_t size = round_size(nbytes);
  void* data = host.get();
  // Owned here until the pool has counted it: if the device is full, it is freed on the throw.
  auto block = std::make_unique<Adopted>();
  block->host = std::move(host);
  block->size = size;
  block->requested = nbytes;
  block->device = device;
  {
    std::unique_lock lock(p.mutex);
    reserve_locked(device, p, lock, size, nbytes);
    count_live_locked(p, size, nbytes);
    p.adopted.insert(block.get());
  }
  return {data, block.release(), &delete_adopted, c10::Device(kDeviceType, device)};
}

std::optional<c10::DataPtr> DeviceAllocator::lease(const c10::DataPtr& ptr) {
  void* context = ptr.get_context();
  if (context == nullptr) return std::nullopt;
  if (ptr.get_deleter() == &delete_block) {
    static_cast<Block*>(context)->holders.fetch_add(1, std::memory_order_relaxed);
  } else if (ptr.get_deleter() == &delete_adopted) {
    static_cast<Adopted*>(context)->holders.fetch_add(1, std::memory_order_relaxed);
  } else {
    return std::nullopt;
  }
  return c10::DataPtr(ptr.get(), context, ptr.get_deleter(), ptr.device());
}

void DeviceAllocator::delete_adopted(void* context) noexcept {
  auto* adopted = static_cast<Adopted*>(context);
  if (adopted->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    free_adopted(std::unique_ptr<Adopted>(adopted));
  }
}

void DeviceAllocator::free_adopted(std::unique_ptr<Adopted> owned) noexcept {
  auto& self = instance();  // `owned` is freed after the lock
  Pool& p = *self.pools_[static_cast<std::size_t>(owned->device)];
  std::lock_guard lock(p.mutex);
  p.adopted.erase(owned.get());
  self.uncount_live_locked(p, owned->size, owned->requested);
  p.stats.reserved_bytes[kAll].decrease(owned->size);
  p.stats.segment[kAll].decrease(1);
  ++p.stats.num_device_free;
}

void DeviceAllocator::delete_block(void* context) noexcept {
  auto* block = static_cast<Block*>(context);
  if (block == nullptr) return;  // a zero-byte allocation
  if (block->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    free_block(std::unique_ptr<Block>(block));
  }
}

void DeviceAllocator::free_block(std::unique_ptr<Block> block) noexcept {
  auto& self = instance();
  Pool& p = *self.pools_[static_cast<std::size_t>(block->device)];
  std::lock_guard lock(p.mutex);
  self.uncount_live_locked(p, block->size, block->requested);
  auto& free_blocks = p.cached[block->size];
  free_blocks.push_back(std::move(block));
}

c10::DeleterFnPtr DeviceAllocator::raw_deleter() const {
  return nullptr;  // a DataPtr's context is its block, not its data: no raw allocation API
}

bool DeviceAllocator::is_allocated_block(const c10::DataPtr& ptr) {
  return ptr.get_deleter() == &delete_block;
}

HostBuffer DeviceAllocator::back_with_host_memory(c10::DeviceIndex device, Pool& p,
                                                  std::size_t size) {
  const auto host_alloc = [size] {
    return HostBuffer(static_cast<std::byte*>(std::aligned_alloc(kAlignment, size)));
  };
  HostBuffer buffer = host_alloc();
  // The device had room but the host refused: the cached blocks hold host memory.
  if (buffer == nullptr && release_cache_to_retry_locked(device, p)) buffer = host_alloc();
  return buffer;
}

bool DeviceAllocator::release_cache_to_retry_locked(c10::DeviceIndex device, Pool& p) {
  const bool any_cached = std::any_of(p.cached.begin(), p.cached.end(),
                                      [](const auto& kv) { return !kv.second.empty(); });
  if (!any_cached) return false;
  // Like the CUDA caching allocator: give back the cached blocks, then retry once.
  ++p.stats.num_alloc_retries;
  release_cached_locked(device, p);
  return true;
}

void DeviceAllocator::release_cached_locked(c10::DeviceIndex device, Pool& p) {
  (void)device;
  for (auto& [size, blocks] : p.cached) {
    for (const auto& block : blocks) {
      unregister_range(block->buffer.get());
      p.stats.reserved_bytes[kAll].decrease(size);
      p.stats.segment[kAll].decrease(1);
      ++p.stats.num_device_free;
    }
  }
  p.cached.clear();
}

void DeviceAllocator::emptyCache(c10::MempoolId_t /*mempool_id*/) {
  for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
    Pool& p = pool(d);
    std::lock_guard lock(p.mutex);
    release_cached_locked(d, p);
  }
}

void DeviceAllocator::recordStream(const c10::DataPtr& /*ptr*/, c10::Stream /*stream*/) {
  // Queued work holds a lease on each block it reads and writes until it has run (Executor), so
  // a block a pending op on any stream uses is never freed, hence never reused, before that op
  // ran: what record_stream asks of a caching allocator holds for every block without it.
}

void DeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}

DeviceStats DeviceAllocator::getDeviceStats(c10::DeviceIndex device) {
  Executor::instance().release_finished();  // work that has run no longer holds its operands
  Pool& p = pool(device);
  std::lock_guard lock(p.mutex);
  return p.stats;
}

namespace {
// Applies `fn` to every Stat of the pool's StatArrays.
template <typename Fn>
void for_each_stat(DeviceStats& s, Fn fn) {
  for (auto* array :
       {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
        &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes}) {
    for (auto& stat : *array) fn(stat);
  }
}
}  // namespace

void DeviceAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  Pool& p = pool(device);
  std::lock_guard lock(p.mutex);
  for_each_stat(p.stats, [](c10::CachingAllocator::Stat& stat) { stat.reset_accumulated(); });
  p.stats.num_alloc_retries = 0;
  p.stats.num_ooms = 0;
  p.stats.num_device_alloc = 0;
  p.stats.num_device_free = 0;
}

void DeviceAllocator::resetPeakStats(c10::DeviceIndex device) {
  Pool& p = pool(device);
  std::lock_guard lock(p.mutex);
  for_each_stat(p.stats, [](c10::CachingAllocator::Stat& stat) { stat.reset_peak(); });
}

std::pair<std::size_t, std::size_t> DeviceAllocator::getMemoryInfo(c10::DeviceIndex device) {
  Executor::instance().release_finished();
  Pool& p = pool(device);
  std::lock_guard lock(p.mutex);
  const auto total = static_cast<std::size_t>(config().device_memory);
  const auto reserved = static_cast<std::size_t>(p.stats.reserved_bytes[kAll].current);
  return {total - reserved, total};
}

void DeviceAllocator::register_range(void* ptr, std::size_t size, c10::DeviceIndex device) {
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard lock(ranges_mutex_);
  ranges_[start] = {start + size, device};
}

void DeviceAllocator::unregister_range(void* ptr) {
  std::lock_guard lock(ranges_mutex_);
  ranges_.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

std::optional<c10::DeviceIndex> DeviceAllocator::device_of(const void* ptr) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  {
    std::lock_guard lock(ranges_mutex_);
    auto it = ranges_.upper_bound(address);
    if (it != ranges_.begin() && address < std::prev(it)->second.first) {
      return std::prev(it)->second.second;
    }
  }
  // Adopted blocks are not in the ordered index (too costly per op call): scan them. Only
  // getDeviceFromPtr asks about them, rarely.
  for (const auto& p : pools_) {
    std::lock_guard lock(p->mutex);
    for (const Adopted* block : p->adopted) {
      const auto start = reinterpret_cast<std::uintptr_t>(block->host.get());
      if (address >= start && address < start + block->requested) return block->device;
    }
  }
  return std::nullopt;
}

// c10::GetAllocator(PrivateUse1) and c10::getDeviceAllocator return this allocator.
static c10::AllocatorRegisterer<kDeviceType> g_register_device_allocator(
    &DeviceAllocator::instance());

}  // namespace neuronsim
