// Device memory pools: exact statistics, block reuse, empty_cache and the out-of-memory path.
#include "runtime/Config.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/HostAllocator.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <gtest/gtest.h>

using neuronsim::DeviceAllocator;

namespace {
constexpr auto kAll = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
const at::TensorOptions kOnNeuron0 =
    at::TensorOptions().device(c10::Device("neuron:0")).dtype(at::kByte);

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

TEST(DeviceAllocator, PeakAndReset) {
  auto& alloc = DeviceAllocator::instance();
  alloc.resetPeakStats(0);
  const auto base = alloc.getDeviceStats(0).allocated_bytes[kAll].current;
  { auto t = at::empty({1 << 20}, kOnNeuron0); }
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
