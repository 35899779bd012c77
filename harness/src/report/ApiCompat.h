#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace conform {

// The torch API compatibility table (`neuron-conform api-compat`, docs/api-compat.md), in the
// shape TorchNeuron publishes as torch_api_compatibility.md, derived from test evidence.
//
// One source per run: the run's coverage model (Coverage.h) and its suite's public_api()
// (harness/worker/suitelib/public_api.py): {"mode": "eager" | "compile", "subjects": {subject:
// [entry]}}. Every public API entry a source names becomes a row; for each mode its status is
// judged over the cases of every subject that tests it, in the runs of that mode:
//   Y             some dtype works (every case run at it matched the CPU) and none of those cases
//                 used the CPU fallback;
//   CPU_FALLBACK  some dtype works, through the fallback: the aten ops that fell back, with the
//                 dtypes they fell back at;
//   N             no dtype works: the worst outcome, the dtypes and the first failure's message;
//   untested      no run of that mode, no case, or every case skipped (the skip list's reason).
struct ApiSource {
  nlohmann::json coverage;
  nlohmann::json api;
};

nlohmann::json api_compat(const std::vector<ApiSource>& sources);

// Entries whose status differs between two tables, per mode: {name, section, mode, before, after}.
nlohmann::json api_compat_changes(const nlohmann::json& before, const nlohmann::json& after);

// torch_api_compatibility.md: the header (versions, runs, counts per section), a table per
// section, and the changes when `changes` is not empty.
std::string render_api_compat_markdown(const nlohmann::json& table, const nlohmann::json& changes);

// torch_api_compatibility.csv: one row per entry.
std::string render_api_compat_csv(const nlohmann::json& table);

}  // namespace conform
