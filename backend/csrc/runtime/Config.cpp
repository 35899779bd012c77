#include "runtime/Config.h"

#include <c10/util/Exception.h>

#include <array>
#include <charconv>
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

}  // namespace

const std::map<std::string, std::string>& known_variables() {
  static const std::map<std::string, std::string> kKnown{
      {"NEURONSIM_DEVICES", "number of emulated neuron devices, 1 to 64 (default 2)"},
      {"NEURONSIM_DEVICE_MEMORY",
       "memory capacity of each device in bytes, optionally with a KiB/MiB/GiB/TiB suffix "
       "(default 16GiB)"},
  };
  return kKnown;
}

Config parse_config(const std::map<std::string, std::string>& env) {
  Config cfg;
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
    std::uint64_t bytes = 0;
    TORCH_CHECK_VALUE(parse_bytes(it->second, bytes) && bytes > 0, "NEURONSIM_DEVICE_MEMORY='",
                      it->second, "' is not a memory size: expected a positive number of bytes, ",
                      "optionally with a KiB/MiB/GiB/TiB suffix (e.g. 17179869184 or 16GiB).");
    cfg.device_memory = bytes;
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
