#include "report/Formats.h"

#include <fmt/format.h>

#include <stdexcept>

namespace conform {

std::string json_for_script(const nlohmann::json& data) {
  // '<' can only occur inside JSON strings, where \u003c means the same character.
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string replace_once(const std::string& text, std::string_view placeholder,
                         const std::string& value, const std::string& template_name) {
  const auto at = text.find(placeholder);
  if (at == std::string::npos) {
    throw std::runtime_error(
        fmt::format("{}: the placeholder {} is missing", template_name, placeholder));
  }
  return text.substr(0, at) + value + text.substr(at + placeholder.size());
}

}  // namespace

std::string fill_template(const PageTemplate& page, const nlohmann::json& data) {
  // The script first: the data, inserted last, may contain any text.
  return replace_once(replace_once(page.html, "/*COMMON_JS*/", page.common_js, page.name),
                      "/*DATA*/null", json_for_script(data), page.name);
}

}  // namespace conform
