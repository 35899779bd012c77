#include "Formats.h"

#include <fmt/format.h>

namespace conform {

using nlohmann::json;

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(const json& v) {
  return v.is_null() ? std::string() : v.dump();
}

}  // namespace

std::string render_csv(const json& cov) {
  std::string out =
      "view,name,status,cases,pass,fallback,fail,error,crash,timeout,skip,xfail,xpass,"
      "declared_native,native_calls,fallback_calls,cases_native,cases_fallback,cases_failing\n";
  for (const auto& s : cov["opinfo"]) {
    const json& n = s["counts"];
    std::int64_t total = 0;
    for (const auto& [_, v] : n.items()) total += v.get<std::int64_t>();
    out += fmt::format("opinfo,{},{},{},{},{},{},{},{},{},{},{},{},,,,,,\n",
                       csv_field(s["name"].get<std::string>()), s["status"].get<std::string>(),
                       total, number(n["pass"]), number(n["fallback"]), number(n["fail"]),
                       number(n["error"]), number(n["crash"]), number(n["timeout"]),
                       number(n["skip"]), number(n["xfail"]), number(n["xpass"]));
  }
  for (const auto& a : cov["aten"]) {
    out += fmt::format(
        "aten,{},,,,,,,,,,,,{},{},{},{},{},{}\n", csv_field(a["op"].get<std::string>()),
        number(a["declared_native"]), number(a["native_calls"]), number(a["fallback_calls"]),
        number(a["cases_native"]), number(a["cases_fallback"]), number(a["cases_failing"]));
  }
  return out;
}

}  // namespace conform
