#include "report/Summary.h"

#include "common/Text.h"
#include "common/Vocabulary.h"

#include <fmt/format.h>

#include <map>

namespace conform {

using nlohmann::json;

std::string compile_line(const json& headline) {
  const json& cache = headline.value("compile_cache", json());
  if (!cache.is_object() || !cache.contains("compile_seconds")) return {};
  const auto compiles = cache.value("compiles", std::int64_t{0});
  const auto hits = cache.value("hits", std::int64_t{0});
  const double seconds = cache.value("compile_seconds", 0.0);
  const double cases = headline.value("case_seconds", 0.0);
  // Cold or warm is the persistent cache's state: what a worker reuses in its own memory says
  // nothing about it.
  const auto loaded = cache.value("disk_hits", std::int64_t{0});
  const std::string state =
      compiles == 0 ? (hits > 0 ? "warm: nothing compiled" : "nothing to compile")
      : loaded == 0 ? "cold: nothing loaded from the persistent cache"
                    : fmt::format("{}% of the executables loaded from the persistent cache",
                                  100 * loaded / (loaded + compiles));
  return fmt::format(
      "compile: {} executable(s) compiled in {} by {} case(s), {} of the cases' {}; {} found in the "
      "cache (memory {}, disk {}); {}",
      compiles, format_duration(seconds), cache.value("cases_compiling", std::int64_t{0}),
      cases > 0 ? fmt::format("{:.0f}%", 100.0 * seconds / cases) : std::string("all"),
      format_duration(cases), hits, cache.value("memory_hits", std::int64_t{0}),
      cache.value("disk_hits", std::int64_t{0}), state);
}

std::string run_summary(const json& cov, const std::string& db_path, double wall_seconds,
                        int jobs) {
  const json& run = cov["run"];
  const json& h = cov["headline"];
  const std::string id = run["id"];
  std::string out = fmt::format(
      "run {}  suite {}  torch {}  {} {}  {} worker(s)  {}\n", id, run["suite"].get<std::string>(),
      run["torch"].get<std::string>(), run["backend_module"].get<std::string>(),
      run["backend_version"].get<std::string>(), jobs, format_duration(wall_seconds));
  out += fmt::format("  {} cases:", h["recorded"].get<std::int64_t>());
  bool first = true;
  for (const auto& outcome : kOutcomes) {
    const auto n = h["outcomes"].value(std::string(outcome.name), std::int64_t{0});
    if (n == 0) continue;
    out += fmt::format("{} {} {}", first ? "" : " ·", outcome.name, n);
    first = false;
  }
  out += "\n";
  std::map<std::string, std::int64_t> by_category;  // "outcome/category", sorted
  for (const auto& [category, counts] : cov["skips_by_category"].items())
    for (const auto& [outcome, n] : counts.items()) by_category[outcome + "/" + category] = n;
  if (!by_category.empty()) {
    out += "  by skip-list category:";
    for (const auto& [key, n] : by_category) out += fmt::format("  {} {}", key, n);
    out += "\n";
  }
  if (const std::string compiling = compile_line(h); !compiling.empty())
    out += "  " + compiling + "\n";
  if (!cov["slowest"].empty()) {
    out += "  slowest:";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, cov["slowest"].size()); ++i)
      out += fmt::format("  {} {}", cov["slowest"][i]["id"].get<std::string>(),
                         format_duration(cov["slowest"][i]["duration"].get<double>()));
    out += "\n";
  }
  if (!cov["worst"].empty()) {
    out += "  worst failures:\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, cov["worst"].size()); ++i) {
      const json& w = cov["worst"][i];
      auto number = [&](const char* key) {
        const json& value = w[key];
        return value.is_number()   ? fmt::format("{:.3g}", value.get<double>())
               : value.is_string() ? value.get<std::string>()
                                   : std::string("?");
      };
      out += fmt::format("    {}  max rel {}  max abs {}\n", w["id"].get<std::string>(),
                         number("max_rel_error"), number("max_abs_error"));
    }
  }
  if (const auto missing = h["planned"].get<std::int64_t>() - h["recorded"].get<std::int64_t>();
      missing > 0) {
    out += fmt::format("  {} planned case(s) not recorded: resume with --resume {}\n", missing, id);
  }
  out += fmt::format(
      "  results in {} (run {}); reproduce one case with: neuron-conform repro CASE_ID\n", db_path,
      id);
  return out;
}

}  // namespace conform
