#pragma once

// The aten-overload ledger (docs/ledger.md): every overload of the installed torch with a CPU
// kernel, and for each whether some case of the given runs reached it at the device (natively
// or through the CPU fallback), or why not (a reviewed disposition). Pure arithmetic over data
// the store and the worker provide, so the `ledger` command and the reports count alike.

#include "common/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace conform {

enum class DispositionKind { kNotApplicable, kUnreached };
const char* name(DispositionKind d);

// Why an overload no case reaches is not counted against the backend (a reviewed entry of the
// backend's ledger/dispositions.json, read by expect/Dispositions.h), by overload.
struct Disposition {
  DispositionKind kind = DispositionKind::kNotApplicable;
  std::string reason;
};
using DispositionsByOverload = std::map<std::string, Disposition>;
// As a run stores them (backend_info "dispositions"), and back; a malformed value is none.
nlohmann::json dispositions_json(const DispositionsByOverload& dispositions);
DispositionsByOverload dispositions_from_json(const nlohmann::json& stored);

// Where the runs reached one overload: by route (kRoutes' order), the least case id that did,
// and how many cases.
struct Reached {
  std::array<std::optional<std::string>, kRoutes.size()> first_case;
  std::array<std::int64_t, kRoutes.size()> cases{};

  std::optional<std::string>& first(Route route) {
    return first_case[static_cast<std::size_t>(route)];
  }
};

// kComposite: not applicable to this backend, found by the dispatcher rather than a reviewed
// entry: it registers no kernel for the overload, and PyTorch's composite kernel serves the
// device key, decomposing each call into overloads the device runs (harness/worker/overloads.py).
enum class LedgerStatus {
  kNative,
  kHostOnly,
  kFallback,
  kNotApplicable,
  kComposite,
  kUnreachedKnown,
  kUnreached
};
std::string_view name(LedgerStatus s);

struct LedgerRow {
  std::string overload;
  LedgerStatus status = LedgerStatus::kUnreached;
  std::string case_id;  // reached: one case that did (a native one when there is one)
  std::string reason;   // disposed: the entry's reason
};

struct Ledger {
  std::vector<LedgerRow> rows;  // one per overload, in name order
  std::int64_t total = 0, native = 0, host_only = 0, fallback = 0, not_applicable = 0,
               composite = 0, unreached_known = 0, unreached = 0;
  std::int64_t reached() const { return native + host_only + fallback; }
  // Not applicable: by a disposition, or served by a composite kernel on the device.
  std::int64_t applicable() const { return total - not_applicable - composite; }
  // reached / applicable, in percent; 100 when nothing is applicable.
  double coverage_percent() const;
  // Overloads a run reached that have a not_applicable disposition: the entry is wrong.
  std::vector<std::string> reached_but_not_applicable;
};

// An overload reached counts as reached whatever its disposition (a not_applicable one is
// reported in reached_but_not_applicable); op events of overloads outside `overloads` (other
// namespaces, composite ops without a CPU kernel) are not counted.
// `composite`: the overloads a composite kernel serves on the device (a disposition of theirs
// is overridden: the dispatcher says so for the backend the run used).
Ledger build_ledger(const std::vector<std::string>& overloads,
                    const std::map<std::string, Reached>& reached,
                    const DispositionsByOverload& dispositions,
                    const std::set<std::string>& composite = {});

// How an unreached overload is grouped in the summary: its variant kind ("backward",
// "in-place", "out", "Scalar", "private", "functional") and its family (the op's base name:
// "aten::hypot_.out" -> "hypot").
std::string variant_kind(const std::string& overload);
std::string family(const std::string& overload);

// The counts, and the unreached overloads without a disposition by kind and by family (the
// `top` largest families).
nlohmann::json ledger_json(const Ledger& ledger, int top = 10, bool with_rows = false);
// The ten-second summary: one line of numbers, then the largest kinds and families unreached.
std::string ledger_summary(const Ledger& ledger, int top = 10);

}  // namespace conform
