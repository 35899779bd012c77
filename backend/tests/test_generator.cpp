// Per-device generators: reproducible, independent of each other and of the CPU generator.
#include "runtime/Generator.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

namespace {
at::Tensor randn_on(const char* device) {
  return at::randn({64}, at::TensorOptions().device(c10::Device(device))).cpu();
}
void seed(c10::DeviceIndex device, uint64_t value) {
  at::Generator gen = neuronsim::default_generator(device);  // shares the generator
  gen.set_current_seed(value);
}
}  // namespace

TEST(Generator, SeedReproduces) {
  seed(0, 1234);
  auto a = randn_on("neuron:0");
  seed(0, 1234);
  auto b = randn_on("neuron:0");
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_FALSE(at::equal(a, randn_on("neuron:0")));
}

TEST(Generator, StatePerDeviceAndSeparateFromCpu) {
  seed(0, 7);
  seed(1, 7);
  auto on0 = randn_on("neuron:0");
  // Drawing on device 0 and on the CPU does not advance device 1.
  (void)randn_on("neuron:0");
  (void)at::randn({64});
  auto on1 = randn_on("neuron:1");
  EXPECT_TRUE(at::equal(on0, on1));
}

TEST(Generator, StateRoundTrip) {
  at::Generator gen = neuronsim::default_generator(0);
  gen.set_current_seed(99);
  auto state = gen.get_state();
  auto a = randn_on("neuron:0");
  gen.set_state(state);
  EXPECT_TRUE(at::equal(a, randn_on("neuron:0")));
}

TEST(Generator, ExplicitGeneratorIsUsed) {
  auto gen = neuronsim::make_generator(0);
  gen.set_current_seed(5);
  auto opts = at::TensorOptions().device(c10::Device("neuron:0"));
  auto a = at::empty({32}, opts).uniform_(0, 1, gen).cpu();
  gen.set_current_seed(5);
  auto b = at::empty({32}, opts).uniform_(0, 1, gen).cpu();
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_TRUE((a >= 0).all().item<bool>() && (a < 1).all().item<bool>());
}

TEST(Generator, CpuGeneratorRejectedForDeviceTensor) {
  auto cpu_gen = at::detail::createCPUGenerator(1);
  auto t = at::empty({4}, at::TensorOptions().device(c10::Device("neuron:0")));
  EXPECT_THROW(t.normal_(0, 1, cpu_gen), c10::Error);
}
