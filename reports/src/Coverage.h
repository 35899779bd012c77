#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// The coverage model of one run, `reports/coverage.schema.json`: every number any report
// format shows, computed once from the store, so the formats cannot disagree.
//  - headline: outcome counts, OpInfo and aten totals, the native share of declared ops;
//  - opinfo: per subject, per dtype and check, the outcome (what the suite tested);
//  - aten: per aten op, native and fallback calls and the cases that used it (what ran);
//  - cases: every case with its evidence, fallback ops and a repro command;
//  - skips by category, slowest and worst cases, run metadata.
// `db_path` only goes into repro commands.
nlohmann::json build_coverage(Store& store, const std::string& run_id, const std::string& db_path);

inline constexpr int kCoverageSchemaVersion = 1;

}  // namespace conform
