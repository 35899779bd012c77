#pragma once

#include <c10/core/Device.h>

namespace neuronsim {

// The emulated device is PyTorch's PrivateUse1 backend, renamed "neuron".
constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;
constexpr const char* kDeviceName = "neuron";

// Number of emulated devices. Never throws: 0 when the configuration is invalid
// (DeviceGuardImplInterface::deviceCount must not raise).
c10::DeviceIndex device_count() noexcept;

// Throws a c10::Error naming the index, the valid range and NEURONSIM_DEVICES.
void check_device_index(c10::DeviceIndex index);

// The calling thread's current device (default 0), as in CUDA.
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
c10::DeviceIndex exchange_device(c10::DeviceIndex index);

// Marks the runtime as in use. Device memory cannot be shared with a fork()ed child, so a
// child of a process that initialised the runtime gets a clear error here instead.
void ensure_initialized();
bool is_initialized() noexcept;
bool in_bad_fork() noexcept;

}  // namespace neuronsim
