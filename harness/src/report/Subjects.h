#pragma once

#include "common/SuiteDescription.h"
#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

namespace conform {

// How much of the input space a subject's cases were exercised on, gathered from the evidence
// the checks record (suites/ops/README.md): the layout kinds of its inputs and of its incoming
// gradients (`layouts`, grad_* kinds apart), the device variants (`device_variants`), the
// relations (`relations`), the arguments moved off their defaults (`arguments_varied`), list
// lengths (`lengths`), edge variants, fuzz examples (`fuzz.examples_run`) and random contracts.
// A pass over a thin space says less than one over a wide space: the report shows which.
struct InputSpace {
  std::set<std::string> layouts, gradient_layouts, devices, relations, arguments, contracts;
  std::set<std::int64_t> lengths;
  std::int64_t edge_variants = 0, fuzz_examples = 0;

  void add(const nlohmann::json& evidence);
  nlohmann::json to_json() const;
};

// The subject view of a run, from the coverage model's cases and what the suite declared
// (common/SuiteDescription.h); the same for every suite:
//  - subjects: per subject (OpInfo, architecture, ...) its status over all cases, its checks by
//    dtype, whether it runs natively (every case of the suite's native checks passed
//    natively), a verdict (native, blocked, fails on the CPU too, cannot build), time, peak
//    device memory, fallback and failing ops, blockers, first error, a repro command, and the
//    input space its cases covered (InputSpace);
//  - headline: how many subjects run natively, overall and in each declared headline subset;
//  - op_impact: for every aten op that fell back or failed, the subjects it blocks, sorted by
//    how many would run natively if it alone were fixed.
// Evidence conventions it reads: `stage` Stage::kBuild (the subject could not be built),
// `where` Where::kHarness (the CPU reference failed too), `failing_op`, `peak_device_memory`.
nlohmann::json subject_view(const nlohmann::json& cases, const SuiteDescription& suite);

// Whether a coverage case ran as `outcome` (a matching one: pass, native_unknown): it is that
// outcome, or an xpass whose observed outcome was that.
bool ran_as(const nlohmann::json& c, Outcome outcome);

}  // namespace conform
