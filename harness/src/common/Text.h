#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace conform {

// Text helpers every layer shares.

// A word as a POSIX shell reads it back: unchanged when safe, else single-quoted.
std::string shell_quote(const std::string& word);

// Text on one line: line breaks become spaces, cut at `limit` characters ("..." says so).
std::string one_line(const std::string& text, std::size_t limit = 160);

// Markdown table cell text: pipes and HTML's <, >, & escaped, line breaks flattened, cut at
// `limit` characters.
std::string md_cell(const std::string& text, std::size_t limit = 160);

// "4.2s", "3m07s", "2h05m".
std::string format_duration(double seconds);

// "512 MiB", "9.6 GiB".
std::string describe_bytes(std::int64_t bytes);

// A tensor shape given as a JSON list of sizes: [2, 16] -> "2x16".
std::string shape_text(const nlohmann::json& shape);

// JSON text that never throws: strings that are not UTF-8 (a worker's stderr cut mid-character,
// a line of bytes it wrote on its protocol stream) keep their valid part, the rest becomes U+FFFD.
std::string json_text(const nlohmann::json& value);

}  // namespace conform
