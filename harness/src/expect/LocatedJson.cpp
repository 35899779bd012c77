#include "expect/LocatedJson.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace conform {

using nlohmann::json;

std::string Location::str() const {
  return line > 0 ? fmt::format("{}:{}:{}", file, line, column) : file;
}

Location LocatedTable::where(std::size_t index, const std::string& value, int nth) const {
  if (index < strings.size()) {
    for (const auto& [text, at] : strings[index])
      if (text == value && nth-- == 0) return at;
  }
  return index < entries.size() ? entries[index] : Location{};
}

namespace {

// Where each line of a file starts, so that an offset becomes line:column in O(log lines)
// (a file of thousands of entries is located entry by entry).
class LineIndex {
 public:
  LineIndex(std::string file, const std::string& text) : file_(std::move(file)) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }
  Location at(std::size_t offset) const {
    const auto line = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin();
    return {file_, static_cast<int>(line), static_cast<int>(offset - starts_[line - 1] + 1)};
  }

 private:
  std::string file_;
  std::vector<std::size_t> starts_;
};

// Counts the characters the parser has consumed, so SAX events can be given a position.
struct CountingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p;
  std::size_t* consumed;
  reference operator*() const { return *p; }
  CountingIterator& operator++() {
    ++p;
    ++*consumed;
    return *this;
  }
  CountingIterator operator++(int) {
    auto copy = *this;
    ++*this;
    return copy;
  }
  bool operator==(const CountingIterator& o) const { return p == o.p; }
  bool operator!=(const CountingIterator& o) const { return p != o.p; }
};

// Builds the document (through nlohmann's DOM builder) and records where each entry (an object
// of the top-level "entries" list) starts, and where each string inside it ends.
class LocatingSax : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  LocatingSax(json& root, const std::size_t* consumed)
      : json_sax_dom_parser(root, false), consumed_(consumed) {}
  bool key(std::string& name) {
    if (depth_ == 1) in_entries_ = name == "entries";
    return json_sax_dom_parser::key(name);
  }
  bool start_object(std::size_t n) {
    if (depth_ == 2 && in_entries_) {  // the entries list's objects
      entry_offsets.push_back(*consumed_ - 1);
      string_offsets.emplace_back();
    }
    ++depth_;
    return json_sax_dom_parser::start_object(n);
  }
  bool end_object() {
    --depth_;
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t n) {
    ++depth_;
    return json_sax_dom_parser::start_array(n);
  }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  bool string(std::string& value) {
    if (depth_ > 2 && in_entries_ && !string_offsets.empty()) {
      // At its opening quote (exactly, unless it holds escapes; a JSON string holds no raw
      // newline, so the line is right either way).
      const std::size_t closing = *consumed_ - 1;
      string_offsets.back().emplace_back(
          value, closing > value.size() ? closing - value.size() - 1 : closing);
    }
    return json_sax_dom_parser::string(value);
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    error_position = position;
    error_message = e.what();
    (void)token;
    return false;
  }
  std::vector<std::size_t> entry_offsets;
  std::vector<std::vector<std::pair<std::string, std::size_t>>> string_offsets;
  std::optional<std::size_t> error_position;
  std::string error_message;

 private:
  const std::size_t* consumed_;
  int depth_ = 0;
  bool in_entries_ = false;  // inside the top-level "entries"
};

}  // namespace

std::optional<LocatedTable> parse_located_table(const std::string& text, const std::string& file,
                                                const std::set<std::string>& fields,
                                                std::vector<Problem>& problems) {
  LocatedTable table;
  std::size_t consumed = 0;
  LocatingSax sax(table.root, &consumed);
  const LineIndex lines(file, text);
  CountingIterator first{text.data(), &consumed}, last{text.data() + text.size(), &consumed};
  if (!json::sax_parse(first, last, &sax) || sax.error_position) {
    problems.push_back(
        {lines.at(sax.error_position.value_or(consumed)), "not valid JSON: " + sax.error_message});
    return std::nullopt;
  }
  if (!table.root.is_object()) {
    problems.push_back({lines.at(0), "the file must be a JSON object with \"entries\", a list"});
    return std::nullopt;
  }
  for (const auto& [key, _] : table.root.items()) {
    if (!fields.contains(key))
      problems.push_back({lines.at(0), fmt::format("unknown top-level field '{}'", key)});
  }
  if (!table.root.contains("entries") || !table.root["entries"].is_array()) {
    problems.push_back({lines.at(0), "missing \"entries\": a list of entries"});
    return std::nullopt;
  }
  // Objects are the entries the offsets count; anything else in the list has none (its
  // reader says it must be an object, at the file's start).
  std::size_t object = 0;
  for (const json& entry : table.root["entries"]) {
    const bool located = entry.is_object() && object < sax.entry_offsets.size();
    table.entries.push_back(located ? lines.at(sax.entry_offsets[object]) : lines.at(0));
    table.strings.emplace_back();
    if (located) {
      for (const auto& [value, offset] : sax.string_offsets[object])
        table.strings.back().emplace_back(value, lines.at(offset));
      ++object;
    }
  }
  return table;
}

std::optional<LocatedTable> read_located_table(const std::filesystem::path& path,
                                               const std::set<std::string>& fields,
                                               std::vector<Problem>& problems) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problems.push_back({{path.string()}, "cannot read the file"});
    return std::nullopt;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  return parse_located_table(text, path.string(), fields, problems);
}

}  // namespace conform
