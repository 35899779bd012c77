#include "common/Result.h"
#include "common/Text.h"
#include "report/Formats.h"
#include "report/Summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace conform {

using nlohmann::json;

namespace {

// What runs natively, what blocks the rest, and each subject that does not run natively.
std::string render_subjects_markdown(const json& cov) {
  const json& suite = cov["suite"];
  const std::string nouns = suite["nouns"];
  std::string md = fmt::format("\n### {}{}\n\n**{}.**", char(std::toupper(nouns[0])),
                               nouns.substr(1), cov["headline"]["subject_text"].get<std::string>());
  for (const auto& h : cov["headline"]["headlines"])
    md += fmt::format(" **{}.**", h["text"].get<std::string>());
  md += "\n";
  const json& impact = cov["op_impact"];
  if (!impact.empty()) {
    md += fmt::format(
        "\nWhat to implement next: each aten op that fell back or failed, by the {} that would "
        "run natively if it alone were fixed.\n\n| aten op | would pass if fixed | blocks |\n"
        "| --- | ---: | ---: |\n",
        nouns);
    for (std::size_t i = 0; i < std::min<std::size_t>(15, impact.size()); ++i) {
      const json& r = impact[i];
      md +=
          fmt::format("| `{}` | {} | {} |\n", md_cell(r["op"].get<std::string>()),
                      r["would_pass_if_fixed"].get<std::size_t>(), r["blocks"].get<std::size_t>());
    }
  }
  std::vector<const json*> rows;
  for (const auto& s : cov["subjects"])
    if (!s["native"].get<bool>()) rows.push_back(&s);
  if (rows.empty()) return md;
  constexpr std::size_t kRows = 100;
  md += fmt::format(
      "\n<details><summary>{} {} that do not run natively</summary>\n\n"
      "| {} | verdict | checks | seconds | peak device memory | fallback ops | failing ops "
      "| first error | repro |\n| --- | --- | --- | ---: | ---: | --- | --- | --- | --- |\n",
      rows.size(), nouns, suite["noun"].get<std::string>());
  const auto joined = [](const json& ops) {
    std::string out;
    for (const auto& op : ops) out += (out.empty() ? "" : " ") + op.get<std::string>();
    return out;
  };
  for (std::size_t i = 0; i < std::min(kRows, rows.size()); ++i) {
    const json& a = *rows[i];
    std::string checks;  // "float32: forward pass generate fallback ...; bfloat16: ..."
    for (const auto& [dtype, by_check] : a["dtypes"].items()) {
      checks += (checks.empty() ? "" : "; ") + dtype + ":";
      for (const auto& [check, outcome] : by_check.items())
        checks += " " + check + " " + outcome.get<std::string>();
    }
    const std::string repro = a["repro"];
    md += fmt::format(
        "| {}{} | {} | {} | {:.1f} | {} | {} | {} | {} | {} |\n",
        md_cell(a["name"].get<std::string>()), a["headlines"].empty() ? "" : " ★",
        a["verdict"].get<std::string>(), md_cell(checks, 400), a["seconds"].get<double>(),
        a["peak_device_memory"].is_null() ? std::string("?") : a["peak_device_memory"].dump(),
        md_cell(joined(a["fallback_ops"]), 120), md_cell(joined(a["failing_ops"]), 120),
        md_cell(a["first_error"].get<std::string>(), 120), repro.empty() ? "" : "`" + repro + "`");
  }
  if (rows.size() > kRows) md += fmt::format("\n{} more in index.html.\n", rows.size() - kRows);
  return md + (suite["headlines"].empty() ? "\n" : "\n★ in a headline subset.") + " </details>\n";
}

}  // namespace

std::string render_markdown(const json& cov) {
  const json& run = cov["run"];
  const json& h = cov["headline"];
  std::string md = fmt::format("## neuron-conform: {} run `{}`\n\n",
                               run["suite"].get<std::string>(), run["id"].get<std::string>());
  md += fmt::format("**{}.**\n\n", h["text"].get<std::string>());
  md += fmt::format("torch {} · {} {} · harness {} · host {} · seed {}{}\n\n",
                    run["torch"].get<std::string>(), run["backend_module"].get<std::string>(),
                    run["backend_version"].get<std::string>(),
                    run["harness_version"].get<std::string>(), run["host"].get<std::string>(),
                    run["seed"].get<std::int64_t>(),
                    run["duration_seconds"].is_number()
                        ? fmt::format(" · {:.0f} s", run["duration_seconds"].get<double>())
                        : std::string());
  if (h["recorded"] != h["planned"]) {
    md += fmt::format("> Incomplete: {} of {} planned cases recorded (run {}).\n\n",
                      h["recorded"].get<std::int64_t>(), h["planned"].get<std::int64_t>(),
                      run["status"].get<std::string>());
  }
  if (const std::string compiling = compile_line(h); !compiling.empty())
    md += fmt::format("{}.\n\n", char(std::toupper(compiling[0])) + compiling.substr(1));
  md += "| outcome | cases |\n| --- | ---: |\n";
  for (const auto& [outcome, n] : h["outcomes"].items()) {
    if (n.get<std::int64_t>() > 0)
      md += fmt::format("| {} | {} |\n", outcome, n.get<std::int64_t>());
  }
  if (!cov["skips_by_category"].empty()) {
    md += fmt::format(
        "\n### Skip lists, by category\n\n| category | {} | {} | {} |\n| --- | ---: | ---: "
        "| ---: |\n",
        name(Outcome::kSkip), name(Outcome::kXfail), name(Outcome::kXpass));
    const auto n = [](const json& counts, Outcome o) {
      return counts.value(std::string(name(o)), std::int64_t{0});
    };
    for (const auto& [category, counts] : cov["skips_by_category"].items()) {
      md += fmt::format("| {} | {} | {} | {} |\n", category, n(counts, Outcome::kSkip),
                        n(counts, Outcome::kXfail), n(counts, Outcome::kXpass));
    }
  }
  md += render_subjects_markdown(cov);
  md += "\n### Aten operators\n\n";
  md += fmt::format("{} aten ops ran; {} of them through the CPU fallback in at least one case.",
                    h["aten_ops_seen"].get<std::int64_t>(),
                    h["aten_ops_with_fallback"].get<std::int64_t>());
  if (h["declared_native_ops"].is_number()) {
    md += fmt::format(" {} of the backend's {} declared native ops were exercised.",
                      h["declared_native_ops_exercised"].get<std::int64_t>(),
                      h["declared_native_ops"].get<std::int64_t>());
  }
  if (cov.contains("ledger") && cov["ledger"].is_object()) {
    const json& l = cov["ledger"];
    md += fmt::format(
        " Ledger (`neuron-conform ledger`): {}; {} not_applicable, {} served by a composite "
        "kernel on the device.",
        l["text"].get<std::string>(), l["not_applicable"].get<std::int64_t>(),
        l["composite"].get<std::int64_t>());
  }
  md += "\n";
  std::vector<json> fallback;
  for (const auto& a : cov["aten"]) {
    if (a["cases_fallback"].get<std::int64_t>() > 0) fallback.push_back(a);
  }
  std::sort(fallback.begin(), fallback.end(), [](const json& a, const json& b) {
    return a["cases_fallback"].get<std::int64_t>() > b["cases_fallback"].get<std::int64_t>();
  });
  if (!fallback.empty()) {
    md += "\n| fallback op (most cases first) | cases | calls |\n| --- | ---: | ---: |\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(15, fallback.size()); ++i) {
      md += fmt::format("| `{}` | {} | {} |\n", md_cell(fallback[i]["op"].get<std::string>()),
                        fallback[i]["cases_fallback"].get<std::int64_t>(),
                        fallback[i]["fallback_calls"].get<std::int64_t>());
    }
  }
  // Unexpected failures first: what a reviewer must look at.
  std::vector<const json*> failing;
  for (const auto& c : cov["cases"]) {
    const Outcome o = c["outcome"].get<Outcome>();
    if (is_failure(o) || o == Outcome::kXpass || o == Outcome::kFlaky) failing.push_back(&c);
  }
  if (!failing.empty()) {
    md += fmt::format(
        "\n### Unexpected outcomes ({})\n\n| case | outcome | evidence |\n| --- | --- | --- |\n",
        failing.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(30, failing.size()); ++i) {
      const json& c = *failing[i];
      const json& e = c["evidence"];
      md += fmt::format("| `{}` | {} | {} |\n", md_cell(c["id"].get<std::string>()),
                        c["outcome"].get<std::string>(), md_cell(case_message(e)));
    }
    if (failing.size() > 30) md += fmt::format("\n{} more in index.html.\n", failing.size() - 30);
  }
  if (!cov["slowest"].empty()) {
    md += "\n### Slowest cases\n\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, cov["slowest"].size()); ++i) {
      md += fmt::format("- `{}` {:.1f} s\n", cov["slowest"][i]["id"].get<std::string>(),
                        cov["slowest"][i]["duration"].get<double>());
    }
  }
  return md;
}

}  // namespace conform
