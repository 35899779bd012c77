#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// check-model's judgement: the ops a model uses (captured by harness/worker/check_model.py)
// put against the evidence of one run of the operator suite (or another whose subjects are
// named after aten ops: check-model --suite), op by op and dtype by dtype.
//
// Verdict of an op at a dtype, from the run's cases at that dtype:
//   native    it ran natively in a case that matched the CPU;
//   fallback  it ran only through the CPU fallback (in cases that matched);
//   failing   a case's error names it (e.g. "aten::histc failed in the CPU fallback") and no case
//             at that dtype matched with it;
//   skipped   its OpInfo's cases at that dtype were skipped or expected to fail by a skip list;
//   untested  no evidence: `kernel` says what would happen (device kernel, composite of other
//             ops, or the CPU fallback).
// The model: blocked (exit 2) when an op fails; exit 1 when ops fall back, are skipped, or are
// untested (without a kernel: they would fall back; with one: unproven); else runs natively
// (exit 0). Untested views, which every backend shares, decide nothing. docs/check-model.md
// documents the JSON.
nlohmann::json judge_model(const nlohmann::json& capture, Store& store, const std::string& run_id,
                           const std::string& db_path);

std::string model_check_text(const nlohmann::json& result);
std::string model_check_markdown(const nlohmann::json& result);

}  // namespace conform
