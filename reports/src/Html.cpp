#include "Formats.h"

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

std::string fill_template(const std::string& html_template, const std::string& template_name,
                          const nlohmann::json& data) {
  static constexpr std::string_view kPlaceholder = "/*DATA*/null";
  const auto at = html_template.find(kPlaceholder);
  if (at == std::string::npos) {
    throw std::runtime_error(
        fmt::format("{}: the placeholder {} is missing", template_name, kPlaceholder));
  }
  return html_template.substr(0, at) + json_for_script(data) +
         html_template.substr(at + kPlaceholder.size());
}

std::string render_html(const nlohmann::json& coverage, const std::string& html_template) {
  return fill_template(html_template, "report.html", coverage);
}

}  // namespace conform
