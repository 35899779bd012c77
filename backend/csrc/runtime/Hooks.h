#pragma once

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace neuronsim {

// What ATen asks of the PrivateUse1 backend: availability, devices, generators, pinned memory.
struct Hooks final : public at::PrivateUse1HooksInterface {
  void init() const override;
  bool isBuilt() const override { return true; }
  bool isAvailable() const override;
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override;
  c10::DeviceIndex deviceCount() const override;
  void setCurrentDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex getCurrentDevice() const override;
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override;

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override;
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override;

  bool isPinnedPtr(const void* data) const override;
  at::Allocator* getPinnedMemoryAllocator() const override;
  at::Device getDeviceFromPtr(void* data) const override;
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override;
};

}  // namespace neuronsim
