#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace conform {

// check-model's history (--record, --history): verdicts kept in the store's `model_checks`
// table, and what changed from one to the next. The table's schema is one of the store's
// migrations (record/Store.cpp); docs/results-db.md documents it.

// A check-model verdict kept with --record: the model's identity (key: "hf:<architecture>",
// "script:<path>:<function>", "exported:<path>"; hash: of its config, script or file), the
// versions it was checked with, the run its ops were judged by, and the whole result.
struct ModelCheckRecord {
  std::string model_key;
  std::string model_hash;
  std::string recorded_at;
  std::string torch_version;
  std::string backend_module;
  std::string backend_version;
  std::string harness_version;
  std::string evidence_run;
  int exit_code = 0;
  std::string verdict;
  nlohmann::json result;
};

// Keeps one check. Throws StoreError when its evidence run is not in the store.
void record_model_check(Store& store, const ModelCheckRecord& record);
// The recorded checks of every model whose key contains `key_contains` (any case; "": all), by
// model, oldest first.
std::vector<ModelCheckRecord> model_checks(Store& store, const std::string& key_contains = "");

// The record --record keeps of a check's JSON result (docs/check-model.md; its identity and
// versions come from the capture's `model`).
ModelCheckRecord model_check_record(const nlohmann::json& result, const std::string& recorded_at,
                                    const std::string& harness_version);

// What changed from one recorded check of a model to the next: the model itself (its hash, dtype,
// passes), the versions (torch, backend, harness), the evidence run, the exit code, and every op
// whose verdict changed (`aten::mul.Tensor float32: native -> skipped`), in words.
std::vector<std::string> model_check_changes(const ModelCheckRecord& before,
                                             const ModelCheckRecord& after);

}  // namespace conform
