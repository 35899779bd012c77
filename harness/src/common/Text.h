#pragma once

#include <cstddef>
#include <string>

namespace conform {

// Text helpers every layer shares.

// A word as a POSIX shell reads it back: unchanged when safe, else single-quoted.
std::string shell_quote(const std::string& word);

// Markdown table cell text: pipes and HTML's <, >, & escaped, line breaks flattened, cut at
// `limit` characters.
std::string md_cell(const std::string& text, std::size_t limit = 160);

// "4.2s", "3m07s", "2h05m".
std::string format_duration(double seconds);

}  // namespace conform
