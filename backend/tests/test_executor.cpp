// The execution queues: asynchrony, stream order, events across streams, late errors, fusion.
#include "runtime/Executor.h"
#include "runtime/Stream.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace {

using neuronsim::Executor;
using neuronsim::Work;

Work work(std::string op, std::function<void()> run, std::string fusion_key = "") {
  Work w;
  w.op = std::move(op);
  w.fusion_key = std::move(fusion_key);
  w.run = std::move(run);
  return w;
}

// A gate a queued work waits at: holds its stream busy until the test opens it.
struct Gate {
  std::promise<void> promise;
  std::shared_future<void> opened = promise.get_future().share();
  std::function<void()> wait() {
    return [f = opened] { f.wait(); };
  }
  void open() { promise.set_value(); }
};

c10::Stream pool_stream(c10::DeviceIndex device = 0) {
  return neuronsim::stream_from_pool(device, false);
}

}  // namespace

TEST(Executor, AnOpReturnsOnceQueuedAndRunsInStreamOrder) {
  auto& executor = Executor::instance();
  const auto stream = pool_stream();
  Gate gate;
  std::mutex mutex;
  std::vector<int> order;
  executor.enqueue(stream, work("gate", gate.wait()));
  for (int i = 0; i < 50; ++i) {
    executor.enqueue(stream, work("append", [&, i] {
                       std::lock_guard lock(mutex);
                       order.push_back(i);
                     }));
  }
  EXPECT_FALSE(executor.query_stream(stream));  // held at the gate: the calls returned first
  EXPECT_GE(executor.pending(0), 51);
  gate.open();
  executor.synchronize_stream(stream);
  EXPECT_TRUE(executor.query_stream(stream));
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(Executor, AnErrorSurfacesAtTheNextSynchronizationNamingItsOpOnce) {
  auto& executor = Executor::instance();
  const auto stream = pool_stream(1);
  Gate gate;
  executor.enqueue(stream, work("gate", gate.wait()));
  executor.enqueue(stream, work("aten::index_select", [] {
                     TORCH_CHECK_INDEX(false, "index out of range in self");
                   }));
  std::atomic<bool> later_ran{false};
  executor.enqueue(stream, work("later", [&] { later_ran = true; }));
  gate.open();  // nothing raised at enqueue: the error is the device's
  try {
    executor.synchronize_device(1);
    FAIL() << "expected the queued op's error";
  } catch (const c10::IndexError& e) {  // the kind is kept
    const std::string message = e.what_without_backtrace();
    EXPECT_NE(message.find("aten::index_select failed on the device (op 2 queued on stream"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("index out of range in self"), std::string::npos) << message;
    EXPECT_NE(message.find("NEURONSIM_LAUNCH_BLOCKING=1"), std::string::npos) << message;
  }
  EXPECT_TRUE(later_ran);                       // the stream goes on past a failed op
  EXPECT_NO_THROW(executor.synchronize_device(1));  // raised once
}

TEST(Executor, AnEventOrdersWorkAcrossStreams) {
  auto& executor = Executor::instance();
  const auto producer = pool_stream(), consumer = pool_stream();
  ASSERT_NE(producer, consumer);
  for (int round = 0; round < 20; ++round) {
    Gate gate;
    std::atomic<bool> produced{false}, seen_after{false};
    executor.enqueue(producer, work("gate", gate.wait()));
    executor.enqueue(producer, work("produce", [&] { produced = true; }));
    const auto marker = executor.record(producer);
    EXPECT_FALSE(marker->done());
    executor.wait(consumer, marker);
    executor.enqueue(consumer, work("consume", [&] { seen_after = produced.load(); }));
    EXPECT_FALSE(executor.query_stream(consumer));  // waiting on the producer
    gate.open();
    executor.synchronize_stream(consumer);
    EXPECT_TRUE(marker->done());
    EXPECT_TRUE(seen_after) << "round " << round;
  }
}

TEST(Executor, ConsecutiveFusibleOpsRunAsOneChainCompiledOnce) {
  auto& executor = Executor::instance();
  const auto stream = pool_stream();
  std::vector<std::vector<std::string>> compiled;
  auto engines = executor.set_chain_compiler(
      [&](const std::vector<std::string>& keys) { compiled.push_back(keys); });
  executor.reset_stats();
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    executor.enqueue(stream, work("sin", [&, i] { order.push_back(i); }, "k" + std::to_string(i)));
  }
  executor.enqueue(stream, work("sort", [&] { order.push_back(3); }));  // not fusible: ends it
  executor.enqueue(stream, work("cos", [&] { order.push_back(4); }, "k4"));  // alone: no chain
  executor.synchronize_stream(stream);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_EQ(compiled[0], (std::vector<std::string>{"k0", "k1", "k2"}));
  auto stats = executor.stats();
  EXPECT_EQ(stats.queued, 5);
  EXPECT_EQ(stats.executables, 3);  // the chain, sort, cos
  EXPECT_EQ(stats.fused_ops, 3);
  EXPECT_EQ(stats.fused_chains, 1);

  // a chain is cut at the size limit
  compiled.clear();
  for (std::size_t i = 0; i < Executor::kMaxChain + 1; ++i) {
    executor.enqueue(stream, work("mul", [] {}, "m"));
  }
  executor.synchronize_stream(stream);
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_EQ(compiled[0].size(), Executor::kMaxChain);

  // fusion off: every op is its own executable
  neuronsim::set_fusion_enabled(false);
  compiled.clear();
  executor.enqueue(stream, work("a", [] {}, "a"));
  executor.enqueue(stream, work("b", [] {}, "b"));
  executor.synchronize_stream(stream);
  neuronsim::set_fusion_enabled(true);
  EXPECT_TRUE(compiled.empty());
  executor.set_chain_compiler(std::move(engines));
}

TEST(Executor, WorkThatQueuesOrWaitsItselfRunsInline) {
  auto& executor = Executor::instance();
  const auto stream = pool_stream();
  std::vector<int> order;
  executor.enqueue(stream, work("outer", [&] {
                     order.push_back(1);
                     // a kernel calling device ops of its own: run now, not behind itself
                     executor.enqueue(stream, work("inner", [&] { order.push_back(2); }));
                     executor.synchronize_stream(stream);
                     executor.synchronize_device(0);
                     order.push_back(3);
                   }));
  executor.synchronize_stream(stream);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}
