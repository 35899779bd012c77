#pragma once

#include <map>
#include <string>
#include <vector>

namespace conform {

// Shard K of N (1-based), as given to --shard K/N.
struct ShardSpec {
  int index = 1;
  int count = 1;
  // Throws std::invalid_argument naming the text, e.g. for "0/2", "3/2", "a/b", "2".
  static ShardSpec parse(const std::string& text);
  std::string str() const;
};

// Deterministically splits `cases` into shard.count shards and returns shard.index's cases,
// in their original order. The cases of one subject at one dtype (CaseId::sharing_key: they share
// compiled executables) go to one shard together. With recorded durations, these groups are
// balanced by them (longest first onto the least loaded shard; cases without history count as
// the median); without any, they are dealt round robin. Every case lands in exactly one shard.
std::vector<std::string> shard_cases(const std::vector<std::string>& cases, const ShardSpec& shard,
                                     const std::map<std::string, double>& durations);

}  // namespace conform
