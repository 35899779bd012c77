#include "common/Vocabulary.h"
#include "report/Formats.h"

#include <fmt/format.h>

namespace conform {

using nlohmann::json;

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

std::string number(const json& v) {
  return v.is_null() ? std::string() : v.dump();
}

}  // namespace

std::string render_csv(const json& cov) {
  std::string out = "view,name,status,cases";
  for (const auto& o : kOutcomes) (out += ",") += o.name;
  out += ",declared_native,native_calls,fallback_calls,cases_native,cases_fallback,cases_failing\n";
  for (const auto& s : cov["subjects"]) {
    const json& n = s["counts"];
    std::int64_t total = 0;
    std::string counts;
    for (const auto& o : kOutcomes) {
      const json& count = n[std::string(o.name)];
      total += count.get<std::int64_t>();
      (counts += ",") += number(count);
    }
    out += fmt::format("subject,{},{},{}{},,,,,,\n", csv_field(s["name"].get<std::string>()),
                       s["status"].get<std::string>(), total, counts);
  }
  const std::string no_counts(kOutcomes.size() + 3,
                              ',');  // before status, cases, outcomes, declared
  for (const auto& a : cov["aten"]) {
    out += fmt::format("aten,{}{}{},{},{},{},{},{}\n", csv_field(a["op"].get<std::string>()),
                       no_counts, number(a["declared_native"]), number(a["native_calls"]),
                       number(a["fallback_calls"]), number(a["cases_native"]),
                       number(a["cases_fallback"]), number(a["cases_failing"]));
  }
  return out;
}

}  // namespace conform
