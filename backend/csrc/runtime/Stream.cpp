#include "runtime/Stream.h"

#include "runtime/Config.h"
#include "runtime/Device.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>

namespace neuronsim {
namespace {

thread_local std::array<c10::StreamId, kMaxDevices> tls_current_stream{};  // all default (0)
std::array<std::array<std::atomic<int>, 2>, kMaxDevices> g_next_in_pool{};

c10::DeviceIndex resolve(c10::DeviceIndex device) {
  const auto index = device == -1 ? current_device() : device;
  check_device_index(index);
  return index;
}

}  // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kDeviceType, resolve(device)), 0);
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  const auto index = resolve(device);
  auto& next = g_next_in_pool[static_cast<std::size_t>(index)][high_priority ? 1 : 0];
  const int slot = next.fetch_add(1) % kStreamsPerPriority;
  const c10::StreamId id = 1 + slot + (high_priority ? kStreamsPerPriority : 0);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kDeviceType, index), id);
}

c10::Stream current_stream(c10::DeviceIndex device) {
  const auto index = resolve(device);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kDeviceType, index),
                     tls_current_stream[static_cast<std::size_t>(index)]);
}

c10::Stream exchange_stream(c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == kDeviceType, "expected a neuron stream, got a stream on ",
              stream.device());
  const auto index = resolve(stream.device_index());
  TORCH_CHECK(stream.id() >= 0 && stream.id() <= 2 * kStreamsPerPriority,
              "invalid neuron stream id ", stream.id());
  const auto previous = current_stream(index);
  tls_current_stream[static_cast<std::size_t>(index)] = stream.id();
  return previous;
}

int stream_priority(c10::Stream stream) {
  // PyTorch convention: lower numbers are higher priority.
  return stream.id() > kStreamsPerPriority ? -1 : 0;
}

double elapsed_ms(const Event& start, const Event& end) {
  TORCH_CHECK(start.marker && end.marker,
              "elapsed_time needs both events to have been recorded first");
  TORCH_CHECK(start.enable_timing && end.enable_timing,
              "elapsed_time needs both events to be created with enable_timing=True");
  TORCH_CHECK(start.marker->done() && end.marker->done(),
              "elapsed_time needs both events to have completed: synchronize the end event "
              "first");
  return std::chrono::duration<double, std::milli>(end.marker->when() - start.marker->when())
      .count();
}

}  // namespace neuronsim
