#include "expect/Dispositions.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace conform {

using nlohmann::json;

DispositionsByOverload DispositionsFile::by_overload() const {
  DispositionsByOverload out;
  for (const auto& e : entries)
    for (const auto& o : e.overloads) out.emplace(o, Disposition{e.kind, e.reason});
  return out;
}

std::optional<std::string> dispositions_in(const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    const std::string path = folder + "/ledger/dispositions.json";
    if (std::filesystem::is_regular_file(path)) return path;
  }
  return std::nullopt;
}

namespace {

const std::set<std::string> kFileFields = {"description", "entries", "$schema"};

// The entries of a read table, each checked; `out` holds the reader's problems already.
DispositionsFile from_table(const std::optional<LocatedTable>& table, DispositionsFile out,
                            const std::set<std::string>* known) {
  if (!table) return out;
  std::map<std::string, int> seen;  // name -> times listed so far
  std::map<std::string, Location> first_at;
  const json& entries = table->root["entries"];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& item = entries[i];
    DispositionsFile::Entry e;
    e.where = table->entries[i];
    bool ok = true;
    auto problem = [&](const Location& at, std::string message) {
      out.problems.push_back({at, std::move(message)});
      ok = false;
    };
    if (!item.is_object()) {
      problem(e.where, "an entry must be an object");
      continue;
    }
    for (const auto& [key, _] : item.items()) {
      if (key != "disposition" && key != "reason" && key != "overloads")
        problem(e.where, fmt::format("unknown field '{}' (disposition, reason, overloads)", key));
    }
    const std::string disposition = item.value("disposition", json()).is_string()
                                        ? item["disposition"].get<std::string>()
                                        : std::string();
    if (disposition == name(DispositionKind::kNotApplicable)) {
      e.kind = DispositionKind::kNotApplicable;
    } else if (disposition == name(DispositionKind::kUnreached)) {
      e.kind = DispositionKind::kUnreached;
    } else {
      problem(e.where, disposition.empty()
                           ? "missing \"disposition\" (not_applicable or unreached)"
                           : fmt::format("unknown disposition '{}' (not_applicable or unreached)",
                                         disposition));
    }
    if (item.contains("reason") && item["reason"].is_string()) e.reason = item["reason"];
    if (e.reason.find_first_not_of(" \t\n") == std::string::npos)
      problem(e.where, "missing \"reason\": every entry says why its overloads are disposed of");
    if (!item.contains("overloads") || !item["overloads"].is_array() || item["overloads"].empty()) {
      problem(e.where, "missing \"overloads\": a non-empty list of exact overload names");
      continue;
    }
    std::map<std::string, int> in_entry;  // name -> times listed in this entry so far
    for (const auto& o : item["overloads"]) {
      if (!o.is_string()) {
        problem(e.where, fmt::format("overload {} is not a string", o.dump()));
        continue;
      }
      const std::string overload = o;
      const Location at = table->where(i, overload, in_entry[overload]++);
      if (seen[overload]++ > 0) {
        problem(at, fmt::format("'{}' is listed twice (first at {})", overload,
                                first_at[overload].str()));
        continue;
      }
      first_at[overload] = at;
      if (known && !known->contains(overload))
        problem(at, fmt::format("'{}' is no overload with a CPU kernel of the installed torch",
                                overload));
      e.overloads.push_back(overload);
    }
    // An entry with a problem disposes of nothing: a wrong file must not move the numbers.
    if (ok) out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace

DispositionsFile parse_dispositions(const std::string& text, const std::string& file,
                                    const std::set<std::string>* known) {
  DispositionsFile out;
  const auto table = parse_located_table(text, file, kFileFields, out.problems);
  return from_table(table, std::move(out), known);
}

DispositionsFile load_dispositions(const std::string& path, const std::set<std::string>* known) {
  DispositionsFile out;
  const auto table = read_located_table(path, kFileFields, out.problems);
  return from_table(table, std::move(out), known);
}

}  // namespace conform
