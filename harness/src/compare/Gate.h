#pragma once

#include "compare/Diff.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace conform {

// What fails a release gate. docs/reports.md documents the fields and these defaults.
struct GatePolicy {
  bool fail_on_regression = true;         // a case that matched in the baseline does not now
  bool fail_on_crash = true;              // any crash or timeout in the run
  bool fail_on_flaky = true;              // any case that passed only when rerun
  std::int64_t max_native_ops_lost = 0;   // aten ops native in the baseline, not now
  std::int64_t max_new_fallback_ops = 0;  // aten ops through the fallback now, not before
  bool require_acknowledged_improvements =
      true;  // new passes fail (exit 2) until the baseline has them

  // Reads a policy file; throws naming the file and the field for an unknown field or a wrong type.
  static GatePolicy load(const std::string& path);
};

struct GateVerdict {
  int exit_code = 0;  // 0 pass, 1 regressions, 2 only unacknowledged improvements
  std::string verdict;  // "PASS", "FAIL: regressions", ...
  std::string markdown;
};

GateVerdict judge(const Snapshot& baseline, const Snapshot& run, const GatePolicy& policy);

}  // namespace conform
