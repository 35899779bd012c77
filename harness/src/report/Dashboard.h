#pragma once

#include "record/Store.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace conform {

// The dashboard model over a store's history: a section per suite (every suite with a run, or
// only `suite`), each with the newest run's headline (pass rate, native share, failures new
// since the suite's run before, its report), one digest per run (oldest first), each subject's
// status per run and the run it last changed in, the newest run's regressions against the one
// before, the cases whose outcome changed between the last ten runs of the newest backend
// version, and links to the runs' reports.
nlohmann::json build_dashboard(Store& store, const std::string& db_path,
                               const std::optional<std::string>& suite, const std::string& out_dir);

// Writes index.html (self-contained) and dashboard.json into out_dir.
void write_dashboard(const nlohmann::json& model, const std::string& out_dir);

}  // namespace conform
