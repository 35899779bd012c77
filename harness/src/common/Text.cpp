#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace conform {

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") ==
          std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out = text.substr(0, limit);
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return text.size() > limit ? out + "..." : out;
}

std::string md_cell(const std::string& text, std::size_t limit) {
  std::string out;
  for (char c : one_line(text, limit)) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {  // renderers of Markdown accept inline HTML: show it as text
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const auto s = static_cast<long>(seconds);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

std::string describe_bytes(std::int64_t bytes) {
  constexpr std::array<const char*, 5> kUnits{"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} bytes", bytes);
  return value < 10 && value != std::floor(value) ? fmt::format("{:.1f} {}", value, kUnits[unit])
                                                  : fmt::format("{:.0f} {}", value, kUnits[unit]);
}

std::string shape_text(const nlohmann::json& shape) {
  std::string out;
  for (const auto& size : shape) out += (out.empty() ? "" : "x") + std::to_string(size.get<int>());
  return out;
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace conform
