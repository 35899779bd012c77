#include "plan/Shard.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using conform::shard_cases;
using conform::ShardSpec;

namespace {
std::vector<std::string> cases(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("ops/op" + std::to_string(i) + "/float32/forward");
  return out;
}
}  // namespace

TEST(ShardSpec, ParsesAndRejects) {
  const auto s = ShardSpec::parse("2/4");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  for (const char* bad : {"0/2", "3/2", "a/b", "2", "1/0", "-1/2", "1/2/3", ""}) {
    EXPECT_THROW(ShardSpec::parse(bad), std::invalid_argument) << bad;
  }
}

TEST(Shard, EveryCaseInExactlyOneShard) {
  const auto all = cases(101);
  for (bool with_history : {false, true}) {
    std::map<std::string, double> durations;
    if (with_history) {
      for (int i = 0; i < 101; i += 2) durations[all[i]] = (i % 7) + 0.5;
    }
    std::multiset<std::string> seen;
    for (int k = 1; k <= 3; ++k) {
      for (const auto& c : shard_cases(all, {k, 3}, durations)) seen.insert(c);
    }
    EXPECT_EQ(seen.size(), all.size());
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), all.size());
  }
}

TEST(Shard, RoundRobinWithoutHistoryAndDeterministic) {
  const auto all = cases(6);
  EXPECT_EQ(shard_cases(all, {1, 2}, {}), (std::vector<std::string>{all[0], all[2], all[4]}));
  EXPECT_EQ(shard_cases(all, {2, 2}, {}), (std::vector<std::string>{all[1], all[3], all[5]}));
  EXPECT_EQ(shard_cases(all, {2, 2}, {}), shard_cases(all, {2, 2}, {}));
}

TEST(Shard, BalancedByRecordedDurations) {
  const auto all = cases(5);
  // One slow case and four quick ones: the slow case gets a shard of its own.
  std::map<std::string, double> durations{
      {all[0], 10}, {all[1], 1}, {all[2], 1}, {all[3], 1}, {all[4], 1}};
  const auto first = shard_cases(all, {1, 2}, durations);
  const auto second = shard_cases(all, {2, 2}, durations);
  EXPECT_EQ(first, (std::vector<std::string>{all[0]}));
  EXPECT_EQ(second.size(), 4u);
}

// The checks of one subject at one dtype share executables: one shard runs them all.
TEST(Shard, CasesSharingExecutablesStayTogether) {
  std::vector<std::string> all;
  for (const char* op : {"add", "mul", "sin", "cos", "exp"})
    for (const char* dtype : {"float32", "bfloat16"})
      for (const char* check : {"forward", "backward", "out"})
        all.push_back(fmt::format("ops/{}/{}/{}", op, dtype, check));
  std::map<std::string, double> durations;
  for (std::size_t i = 0; i < all.size(); ++i) durations[all[i]] = 1.0 + static_cast<double>(i % 7);
  for (const auto& history : {std::map<std::string, double>{}, durations}) {
    std::map<std::string, int> shard_of_group;
    for (int k = 1; k <= 3; ++k) {
      for (const auto& id : shard_cases(all, {k, 3}, history)) {
        const std::string group = id.substr(0, id.rfind('/'));
        auto [it, added] = shard_of_group.emplace(group, k);
        EXPECT_EQ(it->second, k) << id << " left its group's shard";
      }
    }
    EXPECT_EQ(shard_of_group.size(), 10u);
  }
}
