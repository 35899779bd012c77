#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace neuronsim {

// What happens to an op outside the native set (NEURONSIM_FALLBACK).
enum class FallbackMode { kAllow, kWarn, kError };
// float64 / int64 on the device (NEURONSIM_64BIT): compute in 32 bits, or refuse.
enum class Wide64Mode { kDowncast, kError };
// float32 matmuls (NEURONSIM_MATMUL): as written, or bfloat16 inputs with float32 accumulation.
enum class MatmulMode { kFp32, kBf16 };

// Emulated compile time (NEURONSIM_COMPILE_LATENCY): compiling an executable of `ops` ops takes
// base_seconds + per_op_seconds * ops, as neuronx-cc takes seconds for an eager op and minutes
// for a model graph. Zero by default (tests); "realistic" is kRealisticLatency.
struct CompileLatency {
  double base_seconds = 0.0;
  double per_op_seconds = 0.0;
  double seconds_for(long long ops) const {
    return base_seconds + per_op_seconds * static_cast<double>(ops);
  }
};
// In line with published neuronx-cc figures: a few seconds for one eager op, about 40 minutes
// for a video model's graph of some 12,000 ops.
inline constexpr CompileLatency kRealisticLatency{3.0, 0.2};

// Settings of the emulated device, read from NEURONSIM_* environment variables.
struct Config {
  int device_count = 2;                          // NEURONSIM_DEVICES
  std::uint64_t device_memory = 16ull << 30;     // NEURONSIM_DEVICE_MEMORY, bytes per device
  std::string cache_dir;                         // NEURONSIM_CACHE_DIR (default below)
  bool cache_disabled = false;                   // NEURONSIM_DISABLE_CACHE=1
  std::uint64_t cache_size = 1ull << 30;         // NEURONSIM_CACHE_SIZE, bytes on disk at most
  FallbackMode fallback = FallbackMode::kAllow;  // NEURONSIM_FALLBACK=allow|warn|error
  Wide64Mode wide64 = Wide64Mode::kDowncast;     // NEURONSIM_64BIT=downcast|error
  MatmulMode matmul = MatmulMode::kFp32;         // NEURONSIM_MATMUL=fp32|bf16
  CompileLatency compile_latency;                // NEURONSIM_COMPILE_LATENCY (above)
  bool launch_blocking = false;                  // NEURONSIM_LAUNCH_BLOCKING=1
  bool fusion = true;                            // NEURONSIM_FUSION=0 turns it off
};

// $XDG_CACHE_HOME/torch_neuronsim, else $HOME/.cache/torch_neuronsim.
std::string default_cache_dir();

const char* to_string(FallbackMode mode);
const char* to_string(Wide64Mode mode);
const char* to_string(MatmulMode mode);
// Parse a mode by name; throws c10::ValueError naming `what`, the value and the choices.
FallbackMode parse_fallback_mode(const std::string& what, const std::string& value);
Wide64Mode parse_wide64_mode(const std::string& what, const std::string& value);
MatmulMode parse_matmul_mode(const std::string& what, const std::string& value);
// "0", "realistic", or "BASE" or "BASE,PER_OP" in seconds (non-negative); throws c10::ValueError
// naming `what` and the value.
CompileLatency parse_compile_latency(const std::string& what, const std::string& value);

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
