#include "runtime/Hooks.h"

#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Executor.h"
#include "runtime/Generator.h"
#include "runtime/HostAllocator.h"

#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

namespace neuronsim {

void Hooks::init() const {
  ensure_initialized();
}

bool Hooks::isAvailable() const {
  return device_count() > 0;
}

bool Hooks::hasPrimaryContext(c10::DeviceIndex device_index) const {
  return is_initialized() && device_index >= 0 && device_index < device_count();
}

c10::DeviceIndex Hooks::deviceCount() const {
  return device_count();
}

void Hooks::setCurrentDevice(c10::DeviceIndex device) const {
  set_device(device);
}

c10::DeviceIndex Hooks::getCurrentDevice() const {
  return current_device();
}

c10::DeviceIndex Hooks::exchangeDevice(c10::DeviceIndex device) const {
  return exchange_device(device);
}

c10::DeviceIndex Hooks::maybeExchangeDevice(c10::DeviceIndex device) const {
  if (device < 0 || device >= device_count()) return current_device();
  return exchange_device(device);
}

const at::Generator& Hooks::getDefaultGenerator(c10::DeviceIndex device_index) const {
  return default_generator(device_index);
}

at::Generator Hooks::getNewGenerator(c10::DeviceIndex device_index) const {
  return make_generator(device_index);
}

bool Hooks::isPinnedPtr(const void* data) const {
  return HostAllocator::instance().is_pinned(data);
}

at::Allocator* Hooks::getPinnedMemoryAllocator() const {
  return &HostAllocator::instance();
}

at::Device Hooks::getDeviceFromPtr(void* data) const {
  const auto device = DeviceAllocator::instance().device_of(data);
  TORCH_CHECK(device.has_value(), "pointer ", data, " is not neuron device memory");
  return {kDeviceType, *device};
}

void Hooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const {
  // Device memory is host-addressable, so the CPU resize (allocate, copy, swap) applies; the
  // storage keeps its allocator, so the new block comes from the device pool.
  const c10::DeviceGuard guard(storage.device());
  drain(-1);  // queued work may still use the bytes this moves or frees (FSDP frees them so)
  at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), new_bytes);
}

namespace {
const bool g_registered = [] {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  c10::register_privateuse1_backend(kDeviceName);
  return true;
}();
}  // namespace

}  // namespace neuronsim
