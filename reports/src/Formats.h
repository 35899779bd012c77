#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace conform {

// Renderers of the coverage model (Coverage.h). Each is a pure function of it.

// summary.md: the headline, outcome and category tables, failing OpInfos, fallback ops; for a
// CI job summary or a pull-request comment.
std::string render_markdown(const nlohmann::json& coverage);

// junit.xml: one <testcase> per case (classname suite.subject, name dtype/check). docs/reports.md
// documents how skip, xfail, xpass and fallback map onto JUnit.
std::string render_junit(const nlohmann::json& coverage);

// ops.csv: one row per OpInfo (view "opinfo") and per aten op (view "aten").
std::string render_csv(const nlohmann::json& coverage);

// index.html: `html_template` with the coverage model embedded, self-contained.
std::string render_html(const nlohmann::json& coverage, const std::string& html_template);

// JSON text that is safe inside an HTML <script> element: '<' is written as \u003c, so no
// string in the data can close the element, and the page parses it with JSON.parse.
std::string json_for_script(const nlohmann::json& data);

// Substitutes `data` for the one placeholder /*DATA*/null in `html_template`; throws naming
// `template_name` when the placeholder is missing.
std::string fill_template(const std::string& html_template, const std::string& template_name,
                          const nlohmann::json& data);

// Markdown table cell text: pipes and HTML's <, >, & escaped, line breaks flattened, cut at
// `limit` characters.
std::string md_cell(const std::string& text, std::size_t limit = 160);

}  // namespace conform
