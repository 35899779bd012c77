// Device memory pools: exact statistics, block reuse, empty_cache and the out-of-memory path.
#include "runtime/Config.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/HostAllocator.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

using neuronsim::DeviceAllocator;

namespace {
constexpr auto kAll = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
const at::TensorOptions kOnNeuron0 =
    at::TensorOptions().device(c10::Device("neuron:0")).dtype(at::kByte);

// This process's data segment (what RLIMIT_DATA limits), from /proc/self/status.
std::int64_t data_segment_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmData:", 0) == 0) return std::stoll(line.substr(7)) * 1024;  // in kB
  }
  return -1;
}

struct Snapshot {
  int64_t allocated, reserved, requested, allocations, segments;
};
Snapshot snap(c10::DeviceIndex d = 0) {
  const auto s = DeviceAllocator::instance().getDeviceStats(d);
  return {s.allocated_bytes[kAll].current, s.reserved_bytes[kAll].current,
          s.requested_bytes[kAll].current, s.allocation[kAll].current, s.segment[kAll].current};
}
}  // namespace

TEST(DeviceAllocator, RoundsToBlocks) {
  EXPECT_EQ(DeviceAllocator::round_size(1), 512u);
  EXPECT_EQ(DeviceAllocator::round_size(512), 512u);
  EXPECT_EQ(DeviceAllocator::round_size(513), 1024u);
}

TEST(DeviceAllocator, ExactStatisticsAndReuse) {
  auto& alloc = DeviceAllocator::instance();
  alloc.emptyCache();
  const Snapshot before = snap();
  {
    auto t = at::empty({1000}, kOnNeuron0);
    const Snapshot during = snap();
    EXPECT_EQ(during.allocated - before.allocated, 1024);
    EXPECT_EQ(during.requested - before.requested, 1000);
    EXPECT_EQ(during.reserved - before.reserved, 1024);
    EXPECT_EQ(during.allocations - before.allocations, 1);
    EXPECT_EQ(during.segments - before.segments, 1);
  }
  Snapshot after = snap();
  EXPECT_EQ(after.allocated, before.allocated);
  EXPECT_EQ(after.reserved - before.reserved, 1024);  // cached for reuse
  {
    auto t = at::empty({1000}, kOnNeuron0);  // same size: the cached block, no new segment
    EXPECT_EQ(snap().segments, after.segments);
  }
  alloc.emptyCache();
  EXPECT_EQ(snap().reserved, before.reserved);
}

// A lease is one more holder of a block's memory, not of its storage: the block outlives the
// storage until the lease is gone (counted as allocated, never handed out again meanwhile), and
// the storage's use count never sees it. A block adopt() took over is held the same way.
TEST(DeviceAllocator, ALeaseHoldsTheMemoryButNotTheStorage) {
  auto& alloc = DeviceAllocator::instance();
  alloc.emptyCache();
  const Snapshot before = snap();
  auto t = at::empty({1000}, kOnNeuron0);
  void* const memory = t.data_ptr();
  std::optional<c10::DataPtr> lease = alloc.lease(t.storage().data_ptr());
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->get(), memory);
  EXPECT_EQ(t.storage().use_count(), 1);
  t.reset();
  EXPECT_EQ(snap().allocated - before.allocated, 1024);  // still held, by the lease
  auto other = at::empty({1000}, kOnNeuron0);
  EXPECT_NE(other.data_ptr(), memory);  // not reused while leased
  lease.reset();
  EXPECT_EQ(snap().allocated - before.allocated, 1024);         // `other` only
  EXPECT_EQ(at::empty({1000}, kOnNeuron0).data_ptr(), memory);  // back in the cache, reused

  c10::DataPtr host = c10::GetCPUAllocator()->allocate(100);
  c10::DataPtr adopted = alloc.adopt(std::move(host), 100, 0);
  std::optional<c10::DataPtr> held = alloc.lease(adopted);
  ASSERT_TRUE(held.has_value());
  const auto adopted_bytes = snap().allocated;
  adopted.clear();
  EXPECT_EQ(snap().allocated, adopted_bytes);
  held.reset();
  EXPECT_EQ(snap().allocated, adopted_bytes - 512);

  EXPECT_FALSE(alloc.lease(at::empty({0}, kOnNeuron0).storage().data_ptr()).has_value());
  EXPECT_FALSE(alloc.lease(c10::GetCPUAllocator()->allocate(8)).has_value());
}

TEST(DeviceAllocator, PeakAndReset) {
  auto& alloc = DeviceAllocator::instance();
  alloc.resetPeakStats(0);
  const auto base = alloc.getDeviceStats(0).allocated_bytes[kAll].current;
  {
    auto t = at::empty({1 << 20}, kOnNeuron0);
  }
  EXPECT_EQ(alloc.getDeviceStats(0).allocated_bytes[kAll].peak - base, 1 << 20);
  alloc.resetPeakStats(0);
  EXPECT_EQ(alloc.getDeviceStats(0).allocated_bytes[kAll].peak, base);
}

TEST(DeviceAllocator, PoolsArePerDevice) {
  const Snapshot d1_before = snap(1);
  const c10::DeviceGuard guard(c10::Device("neuron:1"));
  auto t = at::empty({4096}, at::TensorOptions().device(c10::Device("neuron:1")).dtype(at::kByte));
  EXPECT_EQ(snap(1).allocated - d1_before.allocated, 4096);
  EXPECT_EQ(DeviceAllocator::instance().device_of(t.data_ptr()), 1);
  EXPECT_EQ(DeviceAllocator::instance().device_of(static_cast<char*>(t.data_ptr()) + 100), 1);
  int on_stack = 0;
  EXPECT_FALSE(DeviceAllocator::instance().device_of(&on_stack).has_value());
}

TEST(DeviceAllocator, ZeroSizeTensorsTakeNoMemory) {
  const Snapshot before = snap();
  auto t = at::empty({0, 3}, kOnNeuron0);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(snap().allocated, before.allocated);
}

TEST(DeviceAllocator, OutOfMemoryIsRecoverable) {
  const auto capacity = neuronsim::config().device_memory;
  const Snapshot before = snap();
  try {
    auto t = at::empty({static_cast<int64_t>(capacity) + 1}, kOnNeuron0);
    FAIL() << "allocating more than the capacity should raise";
  } catch (const c10::OutOfMemoryError& e) {
    const std::string msg = e.what_without_backtrace();
    EXPECT_NE(msg.find("neuron:0 out of memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(capacity + 1) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NEURONSIM_DEVICE_MEMORY"), std::string::npos) << msg;
  }
  EXPECT_EQ(snap().allocated, before.allocated);
  EXPECT_EQ(DeviceAllocator::instance().getDeviceStats(0).num_ooms >= 1, true);
  auto ok = at::ones({16}, kOnNeuron0.dtype(at::kFloat));  // still usable
  EXPECT_EQ(ok.sum().item<float>(), 16.0f);
}

TEST(HostAllocator, PinnedRangesAreTracked) {
  auto& host = neuronsim::HostAllocator::instance();
  auto block = host.allocate(1000);
  EXPECT_TRUE(host.is_pinned(block.get()));
  EXPECT_TRUE(host.is_pinned(static_cast<char*>(block.get()) + 999));
  int on_stack = 0;
  EXPECT_FALSE(host.is_pinned(&on_stack));
  void* raw = block.get();
  block.clear();
  EXPECT_FALSE(host.is_pinned(raw));
}

namespace {
// Run in a child process: lowers the process's memory limit so the host refuses a second block,
// then exits 0 when the allocator behaved, or with a code naming what went wrong.
[[noreturn]] void allocate_under_a_host_memory_limit() {
  constexpr std::int64_t kMiB = 1 << 20;
  auto& alloc = DeviceAllocator::instance();
  alloc.emptyCache();
  at::empty({1}, kOnNeuron0);  // the runtime is up before the limit is measured
  const auto limit = static_cast<rlim_t>(data_segment_bytes() + 768 * kMiB);
  const rlimit data{limit, limit};
  if (setrlimit(RLIMIT_DATA, &data) != 0) std::exit(2);
  {
    auto cached = at::empty({512 * kMiB}, kOnNeuron0);
  }  // freed into the cache
  const auto retries = alloc.getDeviceStats(0).num_alloc_retries;
  auto next = at::empty({520 * kMiB}, kOnNeuron0);  // another size: with the cache, 1032 MiB
  if (alloc.getDeviceStats(0).num_alloc_retries != retries + 1) std::exit(3);
  if (snap().reserved != static_cast<int64_t>(DeviceAllocator::round_size(520 * kMiB)))
    std::exit(4);
  try {
    at::empty({1024 * kMiB}, kOnNeuron0);  // nothing cached to give back: refused
    std::exit(5);
  } catch (const c10::OutOfMemoryError& e) {
    std::cerr << e.what_without_backtrace() << std::endl;
  }
  std::exit(0);
}
}  // namespace

// The cached blocks are host memory: when the host refuses a new block (a worker's memory limit),
// the allocator gives the cache back and retries before it reports out of memory; when the host
// still refuses, the error says it was the host, in the C library's words.
TEST(DeviceAllocatorDeathTest, HostRefusalReleasesTheCacheFirst) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(allocate_under_a_host_memory_limit(), ::testing::ExitedWithCode(0),
              "neuron:0 out of memory: the host refused to back an allocation of 1.00 GiB "
              "\\(Cannot allocate memory\\)");
}
