#pragma once

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace neuronsim {

// How c10::DeviceGuard, streams and events reach the emulated device.
struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override;
  c10::Device exchangeDevice(c10::Device device) const override;
  c10::Device getDevice() const override;
  void setDevice(c10::Device device) const override;
  void uncheckedSetDevice(c10::Device device) const noexcept override;
  c10::DeviceIndex deviceCount() const noexcept override;

  c10::Stream getStream(c10::Device device) const override;
  c10::Stream getDefaultStream(c10::Device device) const override;
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool high_priority) const override;
  c10::Stream getNewStream(c10::Device device, int priority) const override;
  c10::Stream exchangeStream(c10::Stream stream) const override;
  bool queryStream(const c10::Stream& stream) const override;
  void synchronizeStream(const c10::Stream& stream) const override;
  void synchronizeDevice(c10::DeviceIndex device_index) const override;

  void record(void** event, const c10::Stream& stream, c10::DeviceIndex device_index,
              c10::EventFlag flag) const override;
  void block(void* event, const c10::Stream& stream) const override;
  bool queryEvent(void* event) const override;
  void synchronizeEvent(void* event) const override;
  void destroyEvent(void* event, c10::DeviceIndex device_index) const noexcept override;
  double elapsedTime(void* start, void* end, c10::DeviceIndex device_index) const override;
};

}  // namespace neuronsim
