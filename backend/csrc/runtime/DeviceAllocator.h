#pragma once

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/util/flat_hash_map.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace neuronsim {

// Frees host memory obtained with std::aligned_alloc.
struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using HostBuffer = std::unique_ptr<std::byte, FreeDeleter>;

// Device memory of the emulated devices: one pool per device with a fixed capacity
// (NEURONSIM_DEVICE_MEMORY), backed by host memory. Freed blocks are cached by rounded
// size and reused, as the CUDA and Neuron caching allocators do; `empty_cache` returns
// them. An allocation that does not fit even after releasing the cache raises
// c10::OutOfMemoryError (torch.OutOfMemoryError) and leaves the pool untouched.
class DeviceAllocator final : public c10::DeviceAllocator {
 public:
  // Blocks are multiples of this (and at least this large).
  static constexpr std::size_t kBlockRounding = 512;

  static DeviceAllocator& instance();

  c10::DataPtr allocate(std::size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  // (free, total) bytes of the device's capacity.
  std::pair<std::size_t, std::size_t> getMemoryInfo(c10::DeviceIndex device) override;

  // Takes over a host buffer that a CPU kernel allocated as device memory of `device`, so that
  // kernel results need no copy. The block counts in the pool's statistics and capacity like
  // any other (raising c10::OutOfMemoryError when it does not fit); when freed it goes back to
  // its original allocator instead of the cache.
  c10::DataPtr adopt(c10::DataPtr host, std::size_t nbytes, c10::DeviceIndex device);

  // Another holder of the memory behind `ptr` (a block this allocator made or adopted): a DataPtr
  // to the same bytes that keeps them from being freed, or reused, until it is gone too, without
  // holding the storage that owns them. What queued work holds, so that a storage's use count is
  // its callers' alone, as on a device whose launches hold no reference (autograd accumulates a
  // gradient in place only when it holds the last one: the choice must not depend on whether the
  // queue has run yet). nullopt for memory of another origin and for zero-byte allocations.
  std::optional<c10::DataPtr> lease(const c10::DataPtr& ptr);

  // Whether `ptr` is a block allocate() made (not a buffer adopt() took over).
  static bool is_allocated_block(const c10::DataPtr& ptr);

  // The device owning the block that contains `ptr`, if it is device memory.
  std::optional<c10::DeviceIndex> device_of(const void* ptr) const;

  static std::size_t round_size(std::size_t nbytes);

 private:
  // A block: the context of its device DataPtr, so freeing it needs no lookup; kept (with its
  // buffer) in the pool's cache when freed, so a reused block costs no heap allocation.
  // Each has its holders counted: the storage owning it and the leases on it; the last to let
  // go frees it.
  struct Block {
    HostBuffer buffer;
    std::size_t size = 0;       // rounded
    std::size_t requested = 0;  // as asked
    c10::DeviceIndex device = 0;
    std::atomic<int> holders{1};
  };
  // A kernel result taken over by adopt(): the context of its device DataPtr, so freeing it
  // needs no lookup.
  struct Adopted {
    c10::DataPtr host;
    std::size_t size = 0;       // rounded, as counted
    std::size_t requested = 0;  // the host block's real size
    c10::DeviceIndex device = 0;
    std::atomic<int> holders{1};
  };
  struct Pool {
    std::mutex mutex;
    std::unordered_map<std::size_t, std::vector<std::unique_ptr<Block>>> cached;  // free, by size
    ska::flat_hash_set<const Adopted*> adopted;  // for device_of only
    c10::CachingDeviceAllocator::DeviceStats stats;
  };

  DeviceAllocator() = default;
  Pool& pool(c10::DeviceIndex device);

  // The deleters of a holder (the owner's DataPtr or a lease's): the last one frees.
  static void delete_block(void* context) noexcept;
  static void delete_adopted(void* context) noexcept;
  static void free_block(std::unique_ptr<Block> block) noexcept;
  static void free_adopted(std::unique_ptr<Adopted> owned) noexcept;
  // Reserves `size` bytes of capacity, releasing the cache if needed; caller holds pool.mutex.
  // Throws c10::OutOfMemoryError (after unlocking) when the device is full.
  void reserve_locked(c10::DeviceIndex device, Pool& pool, std::unique_lock<std::mutex>& lock,
                      std::size_t size, std::size_t requested);
  void count_live_locked(Pool& pool, std::size_t size, std::size_t requested);
  void uncount_live_locked(Pool& pool, std::size_t size, std::size_t requested);
  // Host memory for a new block; if the host refuses (a process memory limit), releases the
  // cache and retries once. Null when it still refuses. Caller holds pool.mutex.
  HostBuffer back_with_host_memory(c10::DeviceIndex device, Pool& pool, std::size_t size);
  // Gives back the cached blocks of `pool` and counts a retry; false when none were cached (a
  // retry would fail the same way). Caller holds pool.mutex.
  bool release_cache_to_retry_locked(c10::DeviceIndex device, Pool& pool);
  // Frees every cached block of `pool`; caller holds pool.mutex.
  void release_cached_locked(c10::DeviceIndex device, Pool& pool);
  void register_range(void* ptr, std::size_t size, c10::DeviceIndex device);
  void unregister_range(void* ptr);

  std::once_flag pools_once_;
  std::vector<std::unique_ptr<Pool>> pools_;
  mutable std::mutex ranges_mutex_;
  std::map<std::uintptr_t, std::pair<std::uintptr_t, c10::DeviceIndex>>
      ranges_;  // start -> (end, device)
};

}  // namespace neuronsim
