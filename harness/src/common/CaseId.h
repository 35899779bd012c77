#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace conform {

// One case = one check of one subject at one dtype: "suite/subject/dtype/check", with "-"
// where a field does not apply (docs/conventions.md). Subjects may contain dots, never slashes.
struct CaseId {
  std::string suite;
  std::string subject;
  std::string dtype;
  std::string check;

  // Throws std::invalid_argument naming the text and what is wrong with it.
  static CaseId parse(std::string_view text);
  std::string str() const;
  // The cases that share a device's compiled executables: one subject at one dtype (its checks
  // call the same ops at the same signatures). Runs keep such cases on one worker and one shard.
  std::string sharing_key() const { return suite + "/" + subject + "/" + dtype; }
  bool operator==(const CaseId&) const = default;
};

// The indices of `ids` grouped by CaseId::sharing_key, groups in the order of their first case,
// each group's indices in order.
std::vector<std::vector<std::size_t>> sharing_groups(const std::vector<std::string>& ids);

}  // namespace conform
