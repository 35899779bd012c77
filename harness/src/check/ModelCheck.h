#pragma once

#include "common/Vocabulary.h"
#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conform {

// check-model's judgement: the ops a model uses (captured by harness/worker/model_check/capture.py)
// put against the evidence of one run of the operator suite (or another whose subjects are
// named after aten ops: check-model --suite), op by op and dtype by dtype.
//
// Verdict of an op at a dtype, from the run's cases at that dtype:
//   native    it ran natively in a case that matched the CPU;
//   host_only it ran in the backend's kernel, which computed on the host (cases that matched,
//             none natively: TorchNeuron's "Host-only");
//   fallback  it ran only through the CPU fallback (in cases that matched);
//   failing   a case's error names it (e.g. "aten::histc failed in the CPU fallback") and no case
//             at that dtype matched with it;
//   unverified it ran without error, but only in cases whose values could not be compared
//             (random or uninitialized outputs: the outcome `unverified`);
//   skipped   its OpInfo's cases at that dtype were skipped or expected to fail by a skip list;
//   untested  no evidence: `kernel` says what would happen (device kernel, composite of other
//             ops, or the CPU fallback).
// The model: blocked (exit 2) when an op fails; exit 1 when ops fall back, compute on the host,
// are unverified, are skipped, or are untested (without a kernel: they would fall back; with
// one: unproven); else runs natively (exit 0). Untested views, which every backend shares, decide nothing. docs/check-model.md
// documents the JSON; report/ModelCheckReport.h renders it as text and Markdown.

// One captured op at one dtype it ran at, judged.
struct OpJudgement {
  std::string op;
  std::string dtype;
  std::int64_t calls = 0;
  std::vector<std::string> phases;  // forward, backward
  nlohmann::json kernel;            // a Kernel's name, as the capture saw it; null: unknown
  OpVerdict verdict = OpVerdict::kUntested;
  // What decided the verdict: the cases, the error, the skip-list entry, or why it is untested
  // (docs/check-model.md: its fields depend on the verdict).
  nlohmann::json evidence;
};

// How many captured ops fall in each class (an op judged at several dtypes counts once in each
// class one of its verdicts puts it in).
struct ModelCheckCounts {
  std::size_t ops = 0;  // captured
  std::size_t failing = 0;
  std::size_t fallback = 0;
  std::size_t host_only = 0;
  std::size_t unverified = 0;
  std::size_t skipped = 0;
  std::size_t untested_fallback = 0;  // untested, and no kernel: they would fall back
  std::size_t untested_unproven = 0;  // untested, with a device or composite kernel
  std::size_t untested_views = 0;     // untested views: they decide nothing
};

struct ModelCheckResult {
  nlohmann::json model;  // as captured: what the model is, its dtype, identity and versions
  std::string run_id;    // the evidence run, in the results DB at db_path
  std::string db_path;
  std::string verdict;  // in words: what decides the exit code
  int exit_code = 0;    // 0 runs natively, 1 ops on the CPU or unproven, 2 blocked
  ModelCheckCounts counts;
  std::vector<OpJudgement> ops;  // worst verdict first
  double capture_seconds = 0;
  // What the capture observed beyond the ops, when it did, with what the judgement added:
  // the probe's disagreements with the prediction, the compile verdict, the shapes' suggestion.
  std::optional<nlohmann::json> probe, compile, placement, shapes;
};

ModelCheckResult judge_model(const nlohmann::json& capture, Store& store, const std::string& run_id,
                             const std::string& db_path);

// The result as check-model --json prints it and --record keeps it (docs/check-model.md).
void to_json(nlohmann::json& j, const OpJudgement& op);
void to_json(nlohmann::json& j, const ModelCheckResult& result);

}  // namespace conform
