#include "runtime/Config.h"

#include <c10/util/Exception.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

extern char** environ;

namespace neuronsim {
namespace {

// Parses a non-negative integer with an optional binary suffix (KiB, MiB, GiB, TiB).
bool parse_bytes(std::string_view text, std::uint64_t& out) {
  static constexpr std::array<std::pair<std::string_view, int>, 4> kSuffixes{
      {{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}};
  int shift = 0;
  for (const auto& [suffix, bits] : kSuffixes) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      shift = bits;
      break;
    }
  }
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return false;
  if (shift > 0 && value > (UINT64_MAX >> shift)) return false;
  out = value << shift;
  return true;
}

// A variable's positive byte count (parse_bytes); throws c10::ValueError naming the variable,
// its value, what it is (`what`) and an example.
std::uint64_t positive_bytes(const std::pair<const std::string, std::string>& variable,
                             const char* what, const char* example) {
  std::uint64_t bytes = 0;
  TORCH_CHECK_VALUE(parse_bytes(variable.second, bytes) && bytes > 0, variable.first, "='",
                    variable.second, "' is not a ", what, ": expected a positive number of bytes, ",
                    "optionally with a KiB/MiB/GiB/TiB suffix (e.g. ", example, ").");
  return bytes;
}

// A 0/1 switch; throws c10::ValueError naming the variable and its value.
bool switch_on(const std::pair<const std::string, std::string>& variable) {
  TORCH_CHECK_VALUE(variable.second == "0" || variable.second == "1", variable.first, "='",
                    variable.second, "' is not 0 or 1.");
  return variable.second == "1";
}

}  // namespace

const std::map<std::string, std::string>& known_variables() {
  static const std::map<std::string, std::string> kKnown{
      {"NEURONSIM_DEVICES", "number of emulated neuron devices, 1 to 64 (default 2)"},
      {"NEURONSIM_DEVICE_MEMORY",
       "memory capacity of each device in bytes, optionally with a KiB/MiB/GiB/TiB suffix "
       "(default 16GiB)"},
      {"NEURONSIM_CACHE_DIR",
       "directory of the on-disk compile cache (default ~/.cache/torch_neuronsim)"},
      {"NEURONSIM_DISABLE_CACHE", "1 disables the on-disk compile cache (default 0)"},
      {"NEURONSIM_CACHE_SIZE",
       "most bytes the on-disk compile cache keeps, optionally with a KiB/MiB/GiB/TiB suffix; "
       "the least recently used entries are evicted past it (default 1GiB)"},
      {"NEURONSIM_DUMP_DIR",
       "torch.compile: write each graph's StableHLO module there, for debugging (default: "
       "unset, no dumps)"},
      {"NEURONSIM_FALLBACK",
       "ops outside the native set: allow (run on the CPU), warn (run on the CPU and warn "
       "once per op) or error (raise NotImplementedError) (default allow)"},
      {"NEURONSIM_64BIT",
       "float64/int64 on the device: downcast (compute in float32/int32) or error "
       "(default downcast)"},
      {"NEURONSIM_MATMUL",
       "float32 matmuls: fp32, or bf16 (bfloat16 inputs, float32 accumulation) (default fp32)"},
      {"NEURONSIM_COMPILE_LATENCY",
       "emulated compile time of each new executable: 0, realistic (3 s plus 0.2 s per op, as "
       "neuronx-cc), or BASE[,PER_OP] in seconds (default 0)"},
      {"NEURONSIM_LAUNCH_BLOCKING",
       "1 runs every device op at its call, so that an error is raised where the op is called "
       "(as CUDA_LAUNCH_BLOCKING); 0 queues ops on their stream (default 0)"},
      {"NEURONSIM_FUSION",
       "0 runs every queued elementwise op as its own executable; 1 fuses runs of them into "
       "one, as adaptive eager execution does (default 1)"},
  };
  return kKnown;
}

namespace {

template <typename Mode, std::size_t N>
Mode parse_choice(const std::string& what, const std::string& value,
                  const std::array<std::pair<const char*, Mode>, N>& choices) {
  std::string names;
  for (const auto& [name, mode] : choices) {
    if (value == name) return mode;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  TORCH_CHECK_VALUE(false, what, "='", value, "' is not one of ", names, ".");
}

constexpr std::array<std::pair<const char*, FallbackMode>, 3> kFallbackModes{
    {{"allow", FallbackMode::kAllow},
     {"warn", FallbackMode::kWarn},
     {"error", FallbackMode::kError}}};
constexpr std::array<std::pair<const char*, Wide64Mode>, 2> kWide64Modes{
    {{"downcast", Wide64Mode::kDowncast}, {"error", Wide64Mode::kError}}};
constexpr std::array<std::pair<const char*, MatmulMode>, 2> kMatmulModes{
    {{"fp32", MatmulMode::kFp32}, {"bf16", MatmulMode::kBf16}}};

template <typename Mode, std::size_t N>
const char* name_of(Mode mode, const std::array<std::pair<const char*, Mode>, N>& choices) {
  for (const auto& [name, m] : choices) {
    if (m == mode) return name;
  }
  return "?";
}

}  // namespace

FallbackMode parse_fallback_mode(const std::string& what, const std::string& value) {
  return parse_choice(what, value, kFallbackModes);
}
Wide64Mode parse_wide64_mode(const std::string& what, const std::string& value) {
  return parse_choice(what, value, kWide64Modes);
}
MatmulMode parse_matmul_mode(const std::string& what, const std::string& value) {
  return parse_choice(what, value, kMatmulModes);
}
const char* to_string(FallbackMode mode) {
  return name_of(mode, kFallbackModes);
}
const char* to_string(Wide64Mode mode) {
  return name_of(mode, kWide64Modes);
}
const char* to_string(MatmulMode mode) {
  return name_of(mode, kMatmulModes);
}

CompileLatency parse_compile_latency(const std::string& what, const std::string& value) {
  if (value == "realistic") return kRealisticLatency;
  const auto seconds = [&](std::string_view text, double& out) {
    const std::string owned(text);
    char* end = nullptr;
    out = std::strtod(owned.c_str(), &end);
    return !owned.empty() && end == owned.c_str() + owned.size() && std::isfinite(out) && out >= 0;
  };
  CompileLatency latency;
  const auto comma = value.find(',');
  const bool ok = seconds(std::string_view(value).substr(0, comma), latency.base_seconds) &&
                  (comma == std::string::npos ||
                   seconds(std::string_view(value).substr(comma + 1), latency.per_op_seconds));
  TORCH_CHECK_VALUE(ok, what, "='", value, "' is not a compile latency: expected 0, realistic, ",
                    "or BASE[,PER_OP] in seconds, non-negative (e.g. 0.5,0.01).");
  return latency;
}

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/torch_neuronsim";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.cache/torch_neuronsim";
}

Config parse_config(const std::map<std::string, std::string>& env) {
  Config cfg;
  cfg.cache_dir = default_cache_dir();
  for (const auto& [name, value] : env) {
    if (!name.starts_with("NEURONSIM_")) continue;
    if (!known_variables().contains(name)) {
      std::string known;
      for (const auto& [k, _] : known_variables()) known += (known.empty() ? "" : ", ") + k;
      TORCH_CHECK_VALUE(false, "unknown environment variable ", name, "=", value,
                        ": torch_neuronsim understands ", known, ". Unset it or fix its name.");
    }
  }
  if (auto it = env.find("NEURONSIM_DEVICES"); it != env.end()) {
    const std::string& text = it->second;
    int n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    TORCH_CHECK_VALUE(!text.empty() && ec == std::errc() && ptr == text.data() + text.size() &&
                          n >= 1 && n <= kMaxDevices,
                      "NEURONSIM_DEVICES='", text, "' is not a device count: expected a whole ",
                      "number from 1 to ", kMaxDevices, ". Set it to e.g. 2, or unset it.");
    cfg.device_count = n;
  }
  if (auto it = env.find("NEURONSIM_DEVICE_MEMORY"); it != env.end()) {
    cfg.device_memory = positive_bytes(*it, "memory size", "17179869184 or 16GiB");
  }
  if (auto it = env.find("NEURONSIM_CACHE_DIR"); it != env.end()) {
    TORCH_CHECK_VALUE(!it->second.empty(), "NEURONSIM_CACHE_DIR is set but empty: give a ",
                      "directory, or unset it for the default ", default_cache_dir(), ".");
    cfg.cache_dir = it->second;
  }
  if (auto it = env.find("NEURONSIM_CACHE_SIZE"); it != env.end()) {
    cfg.cache_size = positive_bytes(*it, "cache size", "1GiB");
  }
  if (auto it = env.find("NEURONSIM_DISABLE_CACHE"); it != env.end()) {
    cfg.cache_disabled = switch_on(*it);
  }
  if (auto it = env.find("NEURONSIM_LAUNCH_BLOCKING"); it != env.end()) {
    cfg.launch_blocking = switch_on(*it);
  }
  if (auto it = env.find("NEURONSIM_FUSION"); it != env.end()) cfg.fusion = switch_on(*it);
  if (auto it = env.find("NEURONSIM_FALLBACK"); it != env.end()) {
    cfg.fallback = parse_fallback_mode("NEURONSIM_FALLBACK", it->second);
  }
  if (auto it = env.find("NEURONSIM_64BIT"); it != env.end()) {
    cfg.wide64 = parse_wide64_mode("NEURONSIM_64BIT", it->second);
  }
  if (auto it = env.find("NEURONSIM_MATMUL"); it != env.end()) {
    cfg.matmul = parse_matmul_mode("NEURONSIM_MATMUL", it->second);
  }
  if (auto it = env.find("NEURONSIM_COMPILE_LATENCY"); it != env.end()) {
    cfg.compile_latency = parse_compile_latency("NEURONSIM_COMPILE_LATENCY", it->second);
  }
  return cfg;
}

const Config& config() {
  // If parsing throws, the static stays uninitialised and the next call reports the error again.
  static const Config cfg = [] {
    std::map<std::string, std::string> env;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      std::string_view kv(*entry);
      if (!kv.starts_with("NEURONSIM_")) continue;
      auto eq = kv.find('=');
      if (eq == std::string_view::npos) continue;
      env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    return parse_config(env);
  }();
  return cfg;
}

}  // namespace neuronsim
