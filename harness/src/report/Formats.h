#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// Renderers of the coverage model (Coverage.h). Each is a pure function of it.

// summary.md: the headline, outcome and category tables, the subjects that do not run natively
// and what blocks them, fallback ops, unexpected outcomes; for a CI job summary or a
// pull-request comment.
std::string render_markdown(const nlohmann::json& coverage);

// junit.xml: one <testcase> per case (classname suite.subject, name dtype/check). docs/reports.md
// documents how skip, xfail, xpass and fallback map onto JUnit.
std::string render_junit(const nlohmann::json& coverage);

// One CSV field (RFC 4180): a field with a comma, quote or line break is quoted, its quotes
// doubled.
std::string csv_field(const std::string& text);

// ops.csv: one row per subject (view "subject") and per aten op (view "aten").
std::string render_csv(const nlohmann::json& coverage);

// A page of reports/templates/: its HTML and the script it shares with the other pages.
struct PageTemplate {
  std::string name;
  std::string html;
  std::string common_js;
};

// The page with `common_js` where /*COMMON_JS*/ stands and `data` for /*DATA*/null: one
// self-contained file (index.html of a report or of the dashboard). Throws naming the
// template when a placeholder is missing.
std::string fill_template(const PageTemplate& page, const nlohmann::json& data);

// JSON text that is safe inside an HTML <script> element: '<' is written as \u003c, so no
// string in the data can close the element, and the page parses it with JSON.parse.
std::string json_for_script(const nlohmann::json& data);

}  // namespace conform
