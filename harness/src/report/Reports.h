#pragma once

#include "record/Store.h"
#include "report/Formats.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace conform {

// A run's digest: the few numbers per night the dashboard plots, and each subject's status.
// Saved in the store (run_digests) whenever a report is written.
nlohmann::json digest_of(const nlohmann::json& coverage);

// The digest of a run: the saved one if current, else computed from the results and saved.
nlohmann::json run_digest(Store& store, const std::string& run_id, const std::string& db_path);

// Writes coverage.json, index.html, summary.md, junit.xml and ops.csv of a run into `out_dir`
// (created), saves the run's digest, and returns the coverage model.
nlohmann::json write_reports(Store& store, const std::string& run_id, const std::string& db_path,
                             const std::string& out_dir);
// The same for a coverage model already built.
void write_reports(Store& store, const nlohmann::json& coverage, const std::string& db_path,
                   const std::string& out_dir);

// Where `api-compat` writes its table by default: <dir of db>/api-compat.
std::string api_compat_dir(const std::string& db_path);
// The table's torch_api_compatibility.md relative to `from_dir` (a report's or the dashboard's
// folder), for a link; null when no table has been written there.
nlohmann::json api_compat_link(const std::string& db_path, const std::string& from_dir);

// `<dir of db>/latest` -> `runs/<run-id>`, replaced atomically.
void point_latest(const std::string& db_path, const std::string& run_id);

// A page of reports/templates/ in the source tree, with the script the pages share; throws
// naming the file when unreadable.
PageTemplate page_template(const std::string& name);

}  // namespace conform
