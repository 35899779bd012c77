#include "runtime/Config.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

using neuronsim::parse_config;

TEST(Config, DefaultsWhenUnset) {
  const auto cfg = parse_config({{"PATH", "/usr/bin"}});
  EXPECT_EQ(cfg.device_count, 2);
  EXPECT_EQ(cfg.device_memory, 16ull << 30);
}

TEST(Config, ParsesDevicesAndMemory) {
  const auto cfg = parse_config({{"NEURONSIM_DEVICES", "4"}, {"NEURONSIM_DEVICE_MEMORY", "1048576"}});
  EXPECT_EQ(cfg.device_count, 4);
  EXPECT_EQ(cfg.device_memory, 1048576u);
  EXPECT_EQ(parse_config({{"NEURONSIM_DEVICE_MEMORY", "3GiB"}}).device_memory, 3ull << 30);
  EXPECT_EQ(parse_config({{"NEURONSIM_DEVICE_MEMORY", "512KiB"}}).device_memory, 512ull << 10);
}

// The message must name the variable and the bad value.
static void expect_value_error(const std::map<std::string, std::string>& env, const std::string& needle) {
  try {
    parse_config(env);
    FAIL() << "expected a ValueError mentioning " << needle;
  } catch (const c10::ValueError& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find(needle), std::string::npos)
        << e.what_without_backtrace();
  }
}

TEST(Config, RejectsMalformedValues) {
  expect_value_error({{"NEURONSIM_DEVICES", "two"}}, "NEURONSIM_DEVICES='two'");
  expect_value_error({{"NEURONSIM_DEVICES", "0"}}, "1 to 64");
  expect_value_error({{"NEURONSIM_DEVICES", "65"}}, "NEURONSIM_DEVICES='65'");
  expect_value_error({{"NEURONSIM_DEVICES", ""}}, "NEURONSIM_DEVICES=''");
  expect_value_error({{"NEURONSIM_DEVICES", "2x"}}, "NEURONSIM_DEVICES='2x'");
  expect_value_error({{"NEURONSIM_DEVICE_MEMORY", "-5"}}, "NEURONSIM_DEVICE_MEMORY='-5'");
  expect_value_error({{"NEURONSIM_DEVICE_MEMORY", "16GB"}}, "KiB/MiB/GiB/TiB");
  expect_value_error({{"NEURONSIM_DEVICE_MEMORY", "0"}}, "positive");
  expect_value_error({{"NEURONSIM_DEVICE_MEMORY", "99999999999TiB"}}, "99999999999TiB");
}

TEST(Config, RejectsUnknownVariables) {
  expect_value_error({{"NEURONSIM_DEVICE", "3"}}, "unknown environment variable NEURONSIM_DEVICE=3");
  expect_value_error({{"NEURONSIM_DEVICE", "3"}}, "NEURONSIM_DEVICE_MEMORY");  // lists the known ones
}
