#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// The coverage model of one run, `reports/coverage.schema.json`: every number any report
// format shows, computed once from the store, so the formats cannot disagree.
//  - vocabulary: outcomes, categories and statuses (common/Vocabulary.h), for the pages;
//  - suite: what the suite declared of itself (its noun, checks, native checks, headlines);
//  - headline: outcome counts, subject and aten totals, the native share of declared ops;
//  - subjects, op_impact: the subject view (Subjects.h), the same for every suite;
//  - aten: per aten op, native and fallback calls and the cases that used it (what ran);
//  - cases: every case with its evidence, fallback ops and a repro command;
//  - skips by category, slowest and worst cases, run metadata.
// `db_path` only goes into repro commands.
nlohmann::json build_coverage(Store& store, const std::string& run_id, const std::string& db_path);

inline constexpr int kCoverageSchemaVersion = 2;

}  // namespace conform
