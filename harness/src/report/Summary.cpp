#include "report/Summary.h"

#include "report/Progress.h"

#include <fmt/format.h>

namespace conform {

std::string run_summary(Store& store, const std::string& run_id, double wall_seconds, int jobs) {
  const auto run = store.run(run_id);
  const auto counts = store.outcome_counts(run_id);
  std::int64_t total = 0;
  for (const auto& [_, n] : counts) total += n;
  std::string out = fmt::format("run {}  suite {}  torch {}  {} {}  {} worker(s)  {}\n", run_id,
                                run->suite, run->torch_version, run->backend_module,
                                run->backend_version, jobs, format_duration(wall_seconds));
  out += fmt::format("  {} cases:", total);
  bool first = true;
  for (std::string_view outcome : kOutcomes) {
    auto it = counts.find(std::string(outcome));
    if (it == counts.end()) continue;
    out += fmt::format("{} {} {}", first ? "" : " ·", outcome, it->second);
    first = false;
  }
  out += "\n";
  if (const auto by_category = store.category_counts(run_id); !by_category.empty()) {
    out += "  by skip-list category:";
    for (const auto& [key, n] : by_category) out += fmt::format("  {} {}", key, n);
    out += "\n";
  }
  const auto slowest = store.slowest(run_id, 5);
  if (!slowest.empty()) {
    out += "  slowest:";
    for (const auto& [id, seconds] : slowest)
      out += fmt::format("  {} {}", id, format_duration(seconds));
    out += "\n";
  }
  const auto worst = store.worst_failures(run_id, 5);
  if (!worst.empty()) {
    out += "  worst failures:\n";
    for (const auto& [id, evidence] : worst) {
      auto number = [&](const char* key) {
        if (!evidence.contains(key)) return std::string("?");
        const auto& value = evidence[key];
        return value.is_number()   ? fmt::format("{:.3g}", value.get<double>())
               : value.is_string() ? value.get<std::string>()
                                   : std::string("?");
      };
      out += fmt::format("    {}  max rel {}  max abs {}\n", id, number("max_rel_error"),
                         number("max_abs_error"));
    }
  }
  if (const auto unrecorded = store.unrecorded(run_id); !unrecorded.empty()) {
    out += fmt::format("  {} planned case(s) not recorded: resume with --resume {}\n",
                       unrecorded.size(), run_id);
  }
  out += fmt::format(
      "  results in {} (run {}); reproduce one case with: neuron-conform repro CASE_ID\n",
      store.db().path(), run_id);
  return out;
}

}  // namespace conform
