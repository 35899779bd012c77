#pragma once

#include <c10/core/Stream.h>

#include "runtime/Executor.h"

#include <chrono>
#include <memory>

namespace neuronsim {

// Streams of the emulated device: each has its queue in the Executor, drained in order by its
// own thread. Stream ids: 0 is a device's default stream, 1..kStreamsPerPriority the
// low-priority pool, then the high-priority pool.
constexpr int kStreamsPerPriority = 32;

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);
// Thread-local current stream of `device` (-1: current device), default stream at first.
c10::Stream current_stream(c10::DeviceIndex device = -1);
// Sets the current stream of the stream's device; returns the previous one.
c10::Stream exchange_stream(c10::Stream stream);
int stream_priority(c10::Stream stream);

// An event: the point of a stream it was last recorded at, complete (with its time) when the
// stream has run the work queued before it.
struct Event {
  c10::DeviceIndex device = -1;
  bool enable_timing = false;
  std::shared_ptr<Marker> marker;  // null until recorded
};

// Milliseconds between two recorded, timing-enabled events.
double elapsed_ms(const Event& start, const Event& end);

}  // namespace neuronsim
