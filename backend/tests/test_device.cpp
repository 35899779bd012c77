// Registration, device selection and the guard, through the public c10/ATen APIs.
#include "runtime/Device.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <gtest/gtest.h>

namespace {
const c10::Device kNeuron0(c10::DeviceType::PrivateUse1, 0);
const c10::Device kNeuron1(c10::DeviceType::PrivateUse1, 1);
}  // namespace

TEST(Device, RegisteredAsNeuron) {
  EXPECT_EQ(c10::get_privateuse1_backend(), "neuron");
  EXPECT_EQ(c10::Device("neuron:1"), kNeuron1);
  EXPECT_TRUE(at::isPrivateUse1HooksRegistered());
  EXPECT_TRUE(at::detail::getPrivateUse1Hooks().isAvailable());
  EXPECT_EQ(c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->deviceCount(), 2);
}

TEST(Device, SetGetExchange) {
  neuronsim::set_device(1);
  EXPECT_EQ(neuronsim::current_device(), 1);
  EXPECT_EQ(neuronsim::exchange_device(0), 1);
  EXPECT_EQ(neuronsim::current_device(), 0);
}

TEST(Device, CurrentDeviceIsPerThread) {
  neuronsim::set_device(1);
  int seen = -1;
  std::thread([&] { seen = neuronsim::current_device(); }).join();
  EXPECT_EQ(seen, 0);
  neuronsim::set_device(0);
}

TEST(Device, InvalidIndexNamesLimitAndRemedy) {
  try {
    neuronsim::set_device(7);
    FAIL() << "set_device(7) should throw";
  } catch (const c10::Error& e) {
    const std::string msg = e.what_without_backtrace();
    EXPECT_NE(msg.find("Invalid device index 7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("neuron:1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NEURONSIM_DEVICES"), std::string::npos) << msg;
  }
  EXPECT_EQ(neuronsim::current_device(), 0);  // unchanged
  EXPECT_THROW(at::empty({2}, at::TensorOptions().device(c10::Device("neuron:9"))), c10::Error);
}

TEST(Device, GuardRestoresDevice) {
  neuronsim::set_device(0);
  {
    const c10::DeviceGuard guard(kNeuron1);
    EXPECT_EQ(neuronsim::current_device(), 1);
    auto t = at::empty({3}, at::TensorOptions().device(c10::Device("neuron")));
    EXPECT_EQ(t.device(), kNeuron1);  // no index: the current device
  }
  EXPECT_EQ(neuronsim::current_device(), 0);
}
