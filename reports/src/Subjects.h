#pragma once

#include "common/SuiteDescription.h"
#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

namespace conform {

// The subject view of a run, from the coverage model's cases and what the suite declared
// (common/SuiteDescription.h); the same for every suite:
//  - subjects: per subject (OpInfo, architecture, ...) its status over all cases, its checks by
//    dtype, whether it runs natively (every case of the suite's native checks passed
//    natively), a verdict (native, blocked, fails on the CPU too, cannot build), time, peak
//    device memory, fallback and failing ops, blockers, first error and a repro command;
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
