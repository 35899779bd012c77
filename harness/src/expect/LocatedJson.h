#pragma once

// The one reader of the project's reviewed tables (skip lists, the ledger's dispositions): a
// JSON object whose "entries" is a list of objects, read with where each entry, and each string
// inside it, stands, so that every problem names the file, line and column to edit.

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace conform {

// Where something is in a reviewed file (line 0: the file as a whole).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column", or "file"
};

struct Problem {
  Location where;
  std::string message;
  std::string str() const { return where.str() + ": " + message; }
};

struct LocatedTable {
  nlohmann::json root;
  std::vector<Location> entries;  // where each object of root["entries"] starts
  // Each entry's string values (its own and those of its lists), each where it stands.
  std::vector<std::vector<std::pair<std::string, Location>>> strings;
  // Where `value` stands in entry `index` (its `nth` occurrence there), else where the entry does.
  Location where(std::size_t index, const std::string& value, int nth = 0) const;
};

// Parses `text` as the reviewed table `file`. Not JSON, not an object, or no list of "entries":
// nullopt and a problem. A top-level field outside `fields` is a problem, the table still read.
std::optional<LocatedTable> parse_located_table(const std::string& text, const std::string& file,
                                                const std::set<std::string>& fields,
                                                std::vector<Problem>& problems);
// The same for a file on disk; a file that cannot be read is a problem.
std::optional<LocatedTable> read_located_table(const std::filesystem::path& path,
                                               const std::set<std::string>& fields,
                                               std::vector<Problem>& problems);

}  // namespace conform
