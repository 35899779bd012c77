#include "runtime/Guard.h"

#include "runtime/Device.h"
#include "runtime/Stream.h"

#include <c10/util/Exception.h>

#include <memory>

namespace neuronsim {
namespace {

void check_neuron(const c10::Device& device) {
  TORCH_CHECK(device.type() == kDeviceType, "expected a neuron device, got ", device);
}

}  // namespace

c10::DeviceType GuardImpl::type() const {
  return kDeviceType;
}

c10::Device GuardImpl::exchangeDevice(c10::Device device) const {
  check_neuron(device);
  return {kDeviceType, exchange_device(device.index())};
}

c10::Device GuardImpl::getDevice() const {
  return {kDeviceType, current_device()};
}

void GuardImpl::setDevice(c10::Device device) const {
  check_neuron(device);
  set_device(device.index());
}

void GuardImpl::uncheckedSetDevice(c10::Device device) const noexcept {
  try {
    set_device(device.index());
  } catch (...) {
    // Called from guard destructors restoring a device that was valid when saved.
  }
}

c10::DeviceIndex GuardImpl::deviceCount() const noexcept {
  return device_count();
}

c10::Stream GuardImpl::getStream(c10::Device device) const {
  return current_stream(device.index());
}

c10::Stream GuardImpl::getDefaultStream(c10::Device device) const {
  return default_stream(device.index());
}

c10::Stream GuardImpl::getStreamFromGlobalPool(c10::Device device, bool high_priority) const {
  return stream_from_pool(device.index(), high_priority);
}

c10::Stream GuardImpl::getNewStream(c10::Device device, int priority) const {
  return stream_from_pool(device.index(), priority < 0);
}

c10::Stream GuardImpl::exchangeStream(c10::Stream stream) const {
  return exchange_stream(stream);
}

bool GuardImpl::queryStream(const c10::Stream& stream) const {
  return Executor::instance().query_stream(stream);
}
void GuardImpl::synchronizeStream(const c10::Stream& stream) const {
  Executor::instance().synchronize_stream(stream);
}
void GuardImpl::synchronizeDevice(c10::DeviceIndex device_index) const {
  const auto index = device_index >= 0 ? device_index : current_device();
  check_device_index(index);
  Executor::instance().synchronize_device(index);
}

// Event handles cross the c10 interface as void*; each owns one heap Event, created by
// record() and destroyed by destroyEvent().
void GuardImpl::record(void** event, const c10::Stream& stream, c10::DeviceIndex device_index,
                       c10::EventFlag flag) const {
  TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
              "event was created for neuron:", static_cast<int>(device_index),
              " but recorded on a stream of ", stream.device());
  if (*event == nullptr) {
    auto created = std::make_unique<Event>();
    created->device = stream.device_index();
    created->enable_timing = flag == c10::EventFlag::BACKEND_DEFAULT;
    *event = created.release();
  }
  static_cast<Event*>(*event)->marker = Executor::instance().record(stream);
}

void GuardImpl::block(void* event, const c10::Stream& stream) const {
  if (event == nullptr) return;  // never recorded: nothing to wait for
  Executor::instance().wait(stream, static_cast<Event*>(event)->marker);
}

bool GuardImpl::queryEvent(void* event) const {
  if (event == nullptr) return true;
  const auto& marker = static_cast<Event*>(event)->marker;
  return marker == nullptr || marker->done();
}

void GuardImpl::synchronizeEvent(void* event) const {
  if (event == nullptr) return;
  const auto* e = static_cast<Event*>(event);
  if (e->marker == nullptr) return;
  e->marker->wait();
  Executor::instance().raise_errors(e->device);
}

void GuardImpl::destroyEvent(void* event, c10::DeviceIndex) const noexcept {
  std::unique_ptr<Event> owned(static_cast<Event*>(event));
}

double GuardImpl::elapsedTime(void* start, void* end, c10::DeviceIndex) const {
  TORCH_CHECK(start != nullptr && end != nullptr,
              "elapsed_time needs both events to have been recorded first");
  return elapsed_ms(*static_cast<Event*>(start), *static_cast<Event*>(end));
}

namespace {
const GuardImpl g_guard_impl;
const c10::impl::DeviceGuardImplRegistrar g_register_guard(kDeviceType, &g_guard_impl);
}  // namespace

}  // namespace neuronsim
