#pragma once

#include <c10/core/Stream.h>

#include <chrono>

namespace neuronsim {

// Streams of the emulated device. Work runs synchronously on the calling thread, so every
// stream is always idle: query() is true, synchronize() and waits return at once, and the
// ordering PyTorch's stream semantics promise holds trivially. Stream ids: 0 is a device's
// default stream, 1..kStreamsPerPriority the low-priority pool, then the high-priority pool.
constexpr int kStreamsPerPriority = 32;

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);
// Thread-local current stream of `device` (-1: current device), default stream at first.
c10::Stream current_stream(c10::DeviceIndex device = -1);
// Sets the current stream of the stream's device; returns the previous one.
c10::Stream exchange_stream(c10::Stream stream);
int stream_priority(c10::Stream stream);

// An event records when the work before it on a stream completed. Since work is
// synchronous, that is the moment of record().
struct Event {
  c10::DeviceIndex device = -1;
  bool enable_timing = false;
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};

// Milliseconds between two recorded, timing-enabled events.
double elapsed_ms(const Event& start, const Event& end);

}  // namespace neuronsim
