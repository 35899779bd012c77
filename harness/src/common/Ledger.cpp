#include "common/Ledger.h"

#include "common/Vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace conform {

using nlohmann::json;

const char* name(DispositionKind d) {
  return d == DispositionKind::kNotApplicable ? "not_applicable" : "unreached";
}

std::string_view name(LedgerStatus s) {
  switch (s) {
    // Reached: by the route the op events name.
    case LedgerStatus::kNative:
      return name(Route::kNative);
    case LedgerStatus::kHostOnly:
      return name(Route::kHostOnly);
    case LedgerStatus::kFallback:
      return name(Route::kFallback);
    case LedgerStatus::kNotApplicable:
      return "not_applicable";
    case LedgerStatus::kComposite:
      return "composite";
    case LedgerStatus::kUnreachedKnown:
      return "unreached";
    case LedgerStatus::kUnreached:
      return "unreached, no disposition";
  }
  return "?";
}

json dispositions_json(const DispositionsByOverload& dispositions) {
  json out = json::object();
  for (const auto& [overload, d] : dispositions)
    out[overload] = {{"disposition", name(d.kind)}, {"reason", d.reason}};
  return out;
}

DispositionsByOverload dispositions_from_json(const json& stored) {
  DispositionsByOverload out;
  if (!stored.is_object()) return out;
  for (const auto& [overload, d] : stored.items()) {
    if (!d.is_object() || !d.contains("disposition") || !d["disposition"].is_string()) continue;
    const std::string disposition = d["disposition"];
    if (disposition != name(DispositionKind::kNotApplicable) &&
        disposition != name(DispositionKind::kUnreached))
      continue;
    out[overload] = {disposition == name(DispositionKind::kNotApplicable)
                         ? DispositionKind::kNotApplicable
                         : DispositionKind::kUnreached,
                     d.value("reason", std::string())};
  }
  return out;
}

double Ledger::coverage_percent() const {
  return applicable() > 0 ? 100.0 * static_cast<double>(reached()) / applicable() : 100.0;
}

Ledger build_ledger(const std::vector<std::string>& overloads,
                    const std::map<std::string, Reached>& reached,
                    const DispositionsByOverload& dispositions,
                    const std::set<std::string>& composite) {
  Ledger out;
  std::vector<std::string> names = overloads;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& overload : names) {
    LedgerRow row;
    row.overload = overload;
    const auto d = dispositions.find(overload);
    const auto r = reached.find(overload);
    // Reached: by its best route (a native case wins over a host-only one, that over the
    // fallback), with that route's case.
    const auto best = [&]() -> std::optional<std::pair<LedgerStatus, std::string>> {
      if (r == reached.end()) return std::nullopt;
      for (const auto& [route, status] : {std::pair{Route::kNative, LedgerStatus::kNative},
                                          std::pair{Route::kHostOnly, LedgerStatus::kHostOnly},
                                          std::pair{Route::kFallback, LedgerStatus::kFallback}}) {
        if (const auto& first = r->second.first_case[static_cast<std::size_t>(route)])
          return std::pair{status, *first};
      }
      return std::nullopt;
    }();
    if (best) {
      std::tie(row.status, row.case_id) = *best;
      ++(row.status == LedgerStatus::kNative     ? out.native
         : row.status == LedgerStatus::kHostOnly ? out.host_only
                                                 : out.fallback);
      if (d != dispositions.end() && d->second.kind == DispositionKind::kNotApplicable)
        out.reached_but_not_applicable.push_back(overload);
    } else if (composite.contains(overload)) {
      row.status = LedgerStatus::kComposite;
      row.reason =
          "no device kernel: PyTorch's composite kernel decomposes it into overloads the device "
          "runs";
      ++out.composite;
    } else if (d != dispositions.end()) {
      row.reason = d->second.reason;
      const bool na = d->second.kind == DispositionKind::kNotApplicable;
      row.status = na ? LedgerStatus::kNotApplicable : LedgerStatus::kUnreachedKnown;
      ++(na ? out.not_applicable : out.unreached_known);
    } else {
      ++out.unreached;
    }
    out.rows.push_back(std::move(row));
  }
  out.total = static_cast<std::int64_t>(out.rows.size());
  return out;
}

std::string family(const std::string& overload) {
  std::string base =
      overload.substr(overload.find("::") == std::string::npos ? 0 : overload.find("::") + 2);
  base = base.substr(0, base.find('.'));
  for (const char* suffix :
       {"_backward_data", "_backward_input", "_backward_weight", "_double_backward", "_backward"}) {
    const std::string s = suffix;
    if (base.size() > s.size() && base.ends_with(s)) {
      base.resize(base.size() - s.size());
      break;
    }
  }
  while (base.size() > 1 && base.back() == '_') base.pop_back();    // in-place, dunder
  while (base.size() > 1 && base.front() == '_') base.erase(0, 1);  // private, dunder
  return base;
}

std::string variant_kind(const std::string& overload) {
  const auto colon = overload.find("::");
  const std::string rest = overload.substr(colon == std::string::npos ? 0 : colon + 2);
  const auto dot = rest.find('.');
  const std::string base = rest.substr(0, dot);
  const std::string over = dot == std::string::npos ? "" : rest.substr(dot + 1);
  if (base.find("backward") != std::string::npos) return "backward";
  if (base.ends_with("_") && !base.ends_with("__")) return "in-place";
  if (over == "out" || over.ends_with("_out") || over.starts_with("out")) return "out";
  if (over.find("Scalar") != std::string::npos) return "Scalar";
  if (base.starts_with("_")) return "private";
  return "functional";
}

namespace {

// (name, count) largest first, then by name; at most `top`.
std::vector<std::pair<std::string, std::int64_t>> largest(
    const std::map<std::string, std::int64_t>& counts, int top) {
  std::vector<std::pair<std::string, std::int64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (top >= 0 && v.size() > static_cast<std::size_t>(top)) v.resize(top);
  return v;
}

struct Groups {
  std::map<std::string, std::int64_t> kinds, families;
};

Groups unreached_groups(const Ledger& ledger) {
  Groups g;
  for (const auto& row : ledger.rows) {
    if (row.status != LedgerStatus::kUnreached) continue;
    ++g.kinds[variant_kind(row.overload)];
    ++g.families[family(row.overload)];
  }
  return g;
}

}  // namespace

json ledger_json(const Ledger& ledger, int top, bool with_rows) {
  const Groups g = unreached_groups(ledger);
  json kinds = json::array(), families = json::array();
  for (const auto& [k, n] : largest(g.kinds, -1)) kinds.push_back({{"kind", k}, {"count", n}});
  for (const auto& [f, n] : largest(g.families, top))
    families.push_back({{"family", f}, {"count", n}});
  json out{{"overloads", ledger.total},
           {"reached", ledger.reached()},
           {"native", ledger.native},
           {std::string(name(Route::kHostOnly)), ledger.host_only},
           {std::string(name(Route::kFallback)), ledger.fallback},
           {"not_applicable", ledger.not_applicable},
           {"composite", ledger.composite},
           {"applicable", ledger.applicable()},
           {"unreached_disposed", ledger.unreached_known},
           {"unreached_undisposed", ledger.unreached},
           {"coverage_percent", ledger.coverage_percent()},
           {"reached_but_not_applicable", ledger.reached_but_not_applicable},
           {"unreached_by_kind", kinds},
           {"unreached_top_families", families}};
  if (with_rows) {
    json rows = json::array();
    for (const auto& r : ledger.rows) {
      json row{{"overload", r.overload}, {"status", name(r.status)}};
      if (!r.case_id.empty()) row["case"] = r.case_id;
      if (!r.reason.empty()) row["reason"] = r.reason;
      rows.push_back(std::move(row));
    }
    out["rows"] = std::move(rows);
  }
  return out;
}

std::string ledger_summary(const Ledger& ledger, int top) {
  std::string text = fmt::format(
      "ledger: {} of {} applicable overloads reached ({:.1f}%): {} native, {} host-only, {} "
      "fallback; of {} with a CPU kernel, {} not_applicable and {} served by a composite kernel "
      "on the device; unreached {} ({} with a disposition, {} without)\n",
      ledger.reached(), ledger.applicable(), ledger.coverage_percent(), ledger.native,
      ledger.host_only, ledger.fallback, ledger.total, ledger.not_applicable, ledger.composite,
      ledger.unreached + ledger.unreached_known, ledger.unreached_known, ledger.unreached);
  const Groups g = unreached_groups(ledger);
  if (!g.kinds.empty()) {
    text += "unreached without a disposition, by kind:";
    for (const auto& [k, n] : largest(g.kinds, -1)) text += fmt::format(" {} {},", k, n);
    text.back() = '\n';
    text += "largest unreached families:";
    for (const auto& [f, n] : largest(g.families, top)) text += fmt::format(" {} {},", f, n);
    text.back() = '\n';
  }
  if (!ledger.reached_but_not_applicable.empty()) {
    text += fmt::format("{} overload(s) marked not_applicable were reached (fix their entries):",
                        ledger.reached_but_not_applicable.size());
    for (const auto& o : ledger.reached_but_not_applicable) text += " " + o;
    text += "\n";
  }
  return text;
}

}  // namespace conform
