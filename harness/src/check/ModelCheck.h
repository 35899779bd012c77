#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

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

// The record --record keeps of a judged model (its identity and versions come from the capture).
ModelCheckRecord model_check_record(const nlohmann::json& result, const std::string& recorded_at,
                                    const std::string& harness_version);

// What changed from one recorded check of a model to the next: the model itself (its hash, dtype,
// passes), the versions (torch, backend, harness), the evidence run, the exit code, and every op
// whose verdict changed (`aten::mul.Tensor float32: native -> skipped`), in words.
std::vector<std::string> model_check_changes(const ModelCheckRecord& before,
                                             const ModelCheckRecord& after);

// --history: each model's recorded checks, oldest first, each with what changed since the one
// before; and the same as JSON (models, each with its checks and their changes).
std::string model_history_text(const std::vector<ModelCheckRecord>& records);
nlohmann::json model_history_json(const std::vector<ModelCheckRecord>& records);
std::string model_check_markdown(const nlohmann::json& result);

}  // namespace conform
