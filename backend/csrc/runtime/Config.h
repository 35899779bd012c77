#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace neuronsim {

// Settings of the emulated device, read from NEURONSIM_* environment variables.
struct Config {
  int device_count = 2;                          // NEURONSIM_DEVICES
  std::uint64_t device_memory = 16ull << 30;     // NEURONSIM_DEVICE_MEMORY, bytes per device
};

// Highest NEURONSIM_DEVICES accepted (c10 caps device indices well above this).
constexpr int kMaxDevices = 64;

// Parses the NEURONSIM_* entries of `env` (name -> value). Throws c10::ValueError naming the
// variable, the value, what is accepted and what to do; an unknown NEURONSIM_* name is an
// error too, so that a typo never silently falls back to a default.
Config parse_config(const std::map<std::string, std::string>& env);

// The process's configuration, parsed from the environment on first use.
const Config& config();

// Every NEURONSIM_* variable this build understands, with a one-line description.
const std::map<std::string, std::string>& known_variables();

}  // namespace neuronsim
