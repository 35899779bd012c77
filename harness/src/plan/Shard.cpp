#include "plan/Shard.h"

#include "common/CaseId.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <stdexcept>

namespace conform {

ShardSpec ShardSpec::parse(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view s, int& out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
  };
  ShardSpec spec;
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), spec.index) ||
      !number(std::string_view(text).substr(slash + 1), spec.count) || spec.count < 1 ||
      spec.index < 1 || spec.index > spec.count) {
    throw std::invalid_argument(
        fmt::format("--shard '{}' is malformed: expected K/N with 1 <= K <= N, e.g. 1/4", text));
  }
  return spec;
}

std::string ShardSpec::str() const {
  return fmt::format("{}/{}", index, count);
}

std::vector<std::string> shard_cases(const std::vector<std::string>& cases, const ShardSpec& shard,
                                     const std::map<std::string, double>& durations) {
  const auto n = static_cast<std::size_t>(shard.count);
  // The unit dealt is a group of cases sharing executables (CaseId::sharing_key), in the order of
  // their first case: a shard that runs all of a subject's cases compiles its signatures once.
  const std::vector<std::vector<std::size_t>> groups = sharing_groups(cases);
  std::vector<std::size_t> owner(groups.size());
  std::vector<double> known;
  for (const auto& c : cases) {
    if (auto it = durations.find(c); it != durations.end()) known.push_back(it->second);
  }
  if (known.empty()) {
    for (std::size_t g = 0; g < groups.size(); ++g) owner[g] = g % n;
  } else {
    std::nth_element(known.begin(), known.begin() + known.size() / 2, known.end());
    const double median = known[known.size() / 2];
    std::vector<double> cost(groups.size(), 0.0);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t i : groups[g]) {
        auto it = durations.find(cases[i]);
        cost[g] += it != durations.end() ? it->second : median;
      }
    }
    std::vector<std::size_t> order(groups.size());
    std::iota(order.begin(), order.end(), 0);
    // Longest first; ties by the first case's id, so every machine computes the same split.
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return cost[a] != cost[b] ? cost[a] > cost[b] : cases[groups[a][0]] < cases[groups[b][0]];
    });
    std::vector<double> load(n, 0.0);
    for (std::size_t g : order) {
      const auto target =
          static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      owner[g] = target;
      load[target] += cost[g];
    }
  }
  std::vector<bool> mine_case(cases.size(), false);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (owner[g] == static_cast<std::size_t>(shard.index - 1))
      for (std::size_t i : groups[g]) mine_case[i] = true;
  }
  std::vector<std::string> mine;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (mine_case[i]) mine.push_back(cases[i]);
  }
  return mine;
}

}  // namespace conform
