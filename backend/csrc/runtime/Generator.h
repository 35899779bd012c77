#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/GeneratorImpl.h>

#include <optional>

namespace neuronsim {

// The random number generator of one neuron device. Its engine is a CPU generator (the
// emulated device computes with ATen's CPU kernels); what makes it a device generator is that
// it has its own state per device, separate from torch's CPU generator, seeded and saved
// through torch.neuron.
class GeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit GeneratorImpl(c10::DeviceIndex device_index);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  static c10::DeviceType device_type();

  // The CPU engine that kernels draw from. Kernels lock the engine's own mutex.
  at::Generator& engine() { return engine_; }

 private:
  GeneratorImpl* clone_impl() const override;
  at::Generator engine_;
};

// The default generator of `device_index` (-1: the current device), created on first use.
const at::Generator& default_generator(c10::DeviceIndex device_index = -1);
at::Generator make_generator(c10::DeviceIndex device_index = -1);

// The CPU engine that kernels draw from: that of `gen` (a neuron generator), or of the default
// generator of `device` when `gen` is empty.
at::Generator engine_of(const std::optional<at::Generator>& gen, c10::DeviceIndex device);

// Whether a schema argument is a generator (`Generator` or `Generator?`).
bool is_generator_argument(const c10::Argument& arg);

// Replaces every generator argument of `op` on `stack` (None or a neuron generator) by the CPU
// engine that kernels draw from (engine_of), so that a CPU kernel run for a device op draws
// from the device's generator, not from torch's CPU generator. `device` is the op's device.
void bind_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack,
                     c10::DeviceIndex device);

}  // namespace neuronsim
