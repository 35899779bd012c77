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
  const auto cfg =
      parse_config({{"NEURONSIM_DEVICES", "4"}, {"NEURONSIM_DEVICE_MEMORY", "1048576"}});
  EXPECT_EQ(cfg.device_count, 4);
  EXPECT_EQ(cfg.device_memory, 1048576u);
  EXPECT_EQ(parse_config({{"NEURONSIM_DEVICE_MEMORY", "3GiB"}}).device_memory, 3ull << 30);
  EXPECT_EQ(parse_config({{"NEURONSIM_DEVICE_MEMORY", "512KiB"}}).device_memory, 512ull << 10);
}

// The message must name the variable and the bad value.
static void expect_value_error(const std::map<std::string, std::string>& env,
                               const std::string& needle) {
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
  expect_value_error({{"NEURONSIM_DEVICE", "3"}},
                     "unknown environment variable NEURONSIM_DEVICE=3");
  expect_value_error({{"NEURONSIM_DEVICE", "3"}},
                     "NEURONSIM_DEVICE_MEMORY");  // lists the known ones
}

TEST(Config, EngineModes) {
  const auto cfg = parse_config({{"NEURONSIM_FALLBACK", "error"},
                                 {"NEURONSIM_64BIT", "error"},
                                 {"NEURONSIM_MATMUL", "bf16"},
                                 {"NEURONSIM_DISABLE_CACHE", "1"},
                                 {"NEURONSIM_CACHE_DIR", "/x/y"}});
  EXPECT_EQ(cfg.fallback, neuronsim::FallbackMode::kError);
  EXPECT_EQ(cfg.wide64, neuronsim::Wide64Mode::kError);
  EXPECT_EQ(cfg.matmul, neuronsim::MatmulMode::kBf16);
  EXPECT_TRUE(cfg.cache_disabled);
  EXPECT_EQ(cfg.cache_dir, "/x/y");
  const auto defaults = parse_config({});
  EXPECT_EQ(defaults.fallback, neuronsim::FallbackMode::kAllow);
  EXPECT_EQ(defaults.wide64, neuronsim::Wide64Mode::kDowncast);
  EXPECT_EQ(defaults.matmul, neuronsim::MatmulMode::kFp32);
  EXPECT_FALSE(defaults.cache_disabled);
  EXPECT_NE(defaults.cache_dir.find("torch_neuronsim"), std::string::npos);
  expect_value_error({{"NEURONSIM_FALLBACK", "strict"}},
                     "NEURONSIM_FALLBACK='strict' is not one of allow, warn, error");
  expect_value_error({{"NEURONSIM_64BIT", "yes"}}, "downcast, error");
  expect_value_error({{"NEURONSIM_MATMUL", "tf32"}}, "fp32, bf16");
  expect_value_error({{"NEURONSIM_DISABLE_CACHE", "true"}}, "NEURONSIM_DISABLE_CACHE='true'");
  expect_value_error({{"NEURONSIM_CACHE_DIR", ""}}, "NEURONSIM_CACHE_DIR is set but empty");
}

TEST(Config, CompileLatency) {
  const auto none = parse_config({});
  EXPECT_EQ(none.compile_latency.seconds_for(1000), 0.0);  // tests compile instantly by default
  const auto realistic = parse_config({{"NEURONSIM_COMPILE_LATENCY", "realistic"}});
  EXPECT_GE(realistic.compile_latency.seconds_for(1), 1.0);  // seconds for an eager op
  EXPECT_GE(realistic.compile_latency.seconds_for(12000), 40 * 60.0);  // a video model's graph
  const auto explicit_ = parse_config({{"NEURONSIM_COMPILE_LATENCY", "0.5,0.01"}});
  EXPECT_DOUBLE_EQ(explicit_.compile_latency.seconds_for(100), 1.5);
  const auto base_only = parse_config({{"NEURONSIM_COMPILE_LATENCY", "2"}});
  EXPECT_DOUBLE_EQ(base_only.compile_latency.seconds_for(9), 2.0);
  for (const char* bad : {"", "fast", "-1", "1,", ",1", "1,2,3", "nan", "1,-0.5"}) {
    expect_value_error({{"NEURONSIM_COMPILE_LATENCY", bad}}, "NEURONSIM_COMPILE_LATENCY='" +
                                                                 std::string(bad) +
                                                                 "' is not a compile latency");
  }
}
