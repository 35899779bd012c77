#include "runtime/Generator.h"

#include "runtime/Config.h"
#include "runtime/Device.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/util/Exception.h>

#include <array>
#include <mutex>

namespace neuronsim {

GeneratorImpl::GeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl(c10::Device(kDeviceType, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      engine_(at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val)) {}

void GeneratorImpl::set_current_seed(uint64_t seed) {
  engine_.set_current_seed(seed);
}

void GeneratorImpl::set_offset(uint64_t /*offset*/) {
  TORCH_CHECK(false, "the neuron generator has no Philox offset; use manual_seed or set_state");
}

uint64_t GeneratorImpl::get_offset() const {
  TORCH_CHECK(false, "the neuron generator has no Philox offset; use get_state");
}

uint64_t GeneratorImpl::current_seed() const {
  return engine_.current_seed();
}

uint64_t GeneratorImpl::seed() {
  return engine_.seed();
}

void GeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  engine_.unsafeGetGeneratorImpl()->set_state(new_state);
}

c10::intrusive_ptr<c10::TensorImpl> GeneratorImpl::get_state() const {
  return engine_.unsafeGetGeneratorImpl()->get_state();
}

c10::DeviceType GeneratorImpl::device_type() {
  return kDeviceType;
}

GeneratorImpl* GeneratorImpl::clone_impl() const {
  auto copy = c10::make_intrusive<GeneratorImpl>(device().index());
  copy->engine_ = engine_.clone();
  return copy.release();  // c10::GeneratorImpl::clone() reclaims ownership
}

at::Generator make_generator(c10::DeviceIndex device_index) {
  const auto index = device_index == -1 ? current_device() : device_index;
  check_device_index(index);
  return at::make_generator<GeneratorImpl>(index);
}

const at::Generator& default_generator(c10::DeviceIndex device_index) {
  static std::array<at::Generator, kMaxDevices> generators;
  static std::array<std::once_flag, kMaxDevices> created;
  const auto index = device_index == -1 ? current_device() : device_index;
  check_device_index(index);
  std::call_once(created[static_cast<std::size_t>(index)],
                 [index] { generators[static_cast<std::size_t>(index)] = make_generator(index); });
  return generators[static_cast<std::size_t>(index)];
}

at::Generator engine_of(const std::optional<at::Generator>& gen, c10::DeviceIndex device) {
  const at::Generator& chosen =
      gen.has_value() && gen->defined() ? *gen : default_generator(device);
  TORCH_CHECK(chosen.device().type() == kDeviceType,
              "expected a neuron generator for a neuron tensor, got a generator on ",
              chosen.device());
  auto* impl = at::check_generator<GeneratorImpl>(chosen);
  return impl->engine();
}

bool is_generator_argument(const c10::Argument& arg) {
  const auto& type = arg.real_type();
  return type->kind() == c10::TypeKind::GeneratorType ||
         (type->kind() == c10::TypeKind::OptionalType &&
          type->containedType(0)->kind() == c10::TypeKind::GeneratorType);
}

void bind_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack,
                     c10::DeviceIndex device) {
  const auto& arguments = op.schema().arguments();
  const std::size_t first = stack.size() - arguments.size();
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    c10::IValue& value = stack[first + i];
    if (!is_generator_argument(arguments[i]) || !(value.isGenerator() || value.isNone())) continue;
    std::optional<at::Generator> gen;
    if (value.isGenerator()) gen = value.toGenerator();
    value = engine_of(gen, device);
  }
}

}  // namespace neuronsim
