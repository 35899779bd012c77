// Streams and events through c10's generic interfaces.
#include "runtime/Stream.h"

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <gtest/gtest.h>

#include <thread>

namespace {
const c10::impl::DeviceGuardImplInterface& impl() {
  return *c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
}
}  // namespace

TEST(Stream, DefaultCurrentAndPool) {
  const c10::Device d0("neuron:0");
  EXPECT_EQ(impl().getDefaultStream(d0).id(), 0);
  EXPECT_EQ(impl().getStream(d0), impl().getDefaultStream(d0));
  auto a = impl().getNewStream(d0, 0);
  auto b = impl().getNewStream(d0, 0);
  EXPECT_NE(a, b);
  EXPECT_NE(a.id(), 0);
  auto high = impl().getNewStream(d0, -1);
  EXPECT_EQ(neuronsim::stream_priority(high), -1);
  EXPECT_EQ(neuronsim::stream_priority(a), 0);
}

TEST(Stream, GuardSetsAndRestoresCurrentStream) {
  const c10::Device d1("neuron:1");
  auto s = impl().getNewStream(d1, 0);
  {
    c10::StreamGuard guard(s);
    EXPECT_EQ(impl().getStream(d1), s);
  }
  EXPECT_EQ(impl().getStream(d1).id(), 0);
}

TEST(Stream, IdleWhenNothingIsQueued) {
  auto s = impl().getNewStream(c10::Device("neuron:0"), 0);
  s.synchronize();
  EXPECT_TRUE(s.query());
}

TEST(Event, RecordQueryElapsed) {
  auto s = impl().getNewStream(c10::Device("neuron:0"), 0);
  c10::Event start(c10::DeviceType::PrivateUse1, c10::EventFlag::BACKEND_DEFAULT);
  c10::Event end(c10::DeviceType::PrivateUse1, c10::EventFlag::BACKEND_DEFAULT);
  EXPECT_TRUE(start.query());  // never recorded
  start.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record(s);
  EXPECT_TRUE(end.query());
  end.synchronize();
  const double ms = start.elapsedTime(end);
  EXPECT_GE(ms, 19.0);
  EXPECT_LT(ms, 5000.0);
}

TEST(Event, ElapsedNeedsTiming) {
  auto s = impl().getNewStream(c10::Device("neuron:0"), 0);
  c10::Event a(c10::DeviceType::PrivateUse1);  // PYTORCH_DEFAULT: no timing
  c10::Event b(c10::DeviceType::PrivateUse1);
  a.record(s);
  b.record(s);
  EXPECT_THROW(a.elapsedTime(b), c10::Error);
}
