#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace conform {

// The project's vocabulary, defined here and nowhere else (docs/conventions.md describes it).
// The results DB's CHECK, coverage.json's schema, skiplists/schema.json and the worker's
// harness/vocabulary.json are derived from or tested against these tables
// (harness/tests/cpp/test_vocabulary.cpp); harness/tests/test_architecture.py checks that no
// other file spells out an outcome, a category, a run status or an evidence value (where, stage).

// A row of a table that only names and explains its values.
template <typename Enum>
struct Named {
  Enum value;
  std::string_view name;
  std::string_view meaning;
};

// What happened to one case in one run.
enum class Outcome {
  kPass,
  kFallback,
  kFail,
  kError,
  kCrash,
  kTimeout,
  kSkip,
  kXfail,
  kXpass,
  kFlaky,
  kNativeUnknown,
  kUnverified,
  kXfailChanged,
  kHostOnly,
};

// What an outcome says about the backend.
enum class OutcomeKind {
  kMatched,     // ran and matched the CPU (natively or not), or passed against an expectation
  kFailure,     // ran and did not match, unexpectedly
  kExpected,    // ran and failed as a skip list expected
  kNotRun,      // a skip list decided it is never run
  kUnstable,    // failed, then passed when run again: neither a pass nor a failure
  kUnverified,  // ran and nothing was seen wrong, but some values were not compared
};

struct OutcomeInfo {
  Outcome value;
  std::string_view name;
  std::string_view letters;  // the report matrix's cell text
  int severity;              // higher is worse: a cell that holds several shows the worst
  OutcomeKind kind;
  std::string_view meaning;
};

inline constexpr std::array<OutcomeInfo, 14> kOutcomes = {{
    {Outcome::kPass, "pass", "P", 0, OutcomeKind::kMatched,
     "matched the CPU reference; every aten op ran natively on the device"},
    {Outcome::kFallback, "fallback", "FB", 3, OutcomeKind::kMatched,
     "matched, but one or more aten ops ran through the CPU fallback"},
    {Outcome::kFail, "fail", "F", 10, OutcomeKind::kFailure,
     "ran; the result differs from the CPU's beyond tolerance"},
    {Outcome::kError, "error", "E", 11, OutcomeKind::kFailure, "raised an exception"},
    {Outcome::kCrash, "crash", "C", 13, OutcomeKind::kFailure, "the worker died; the run went on"},
    {Outcome::kTimeout, "timeout", "T", 12, OutcomeKind::kFailure,
     "exceeded the per-case limit; the worker was replaced"},
    {Outcome::kSkip, "skip", "S", 5, OutcomeKind::kNotRun,
     "not run: a skip-list entry, or the test skipped itself (upstream's SkipTest)"},
    {Outcome::kXfail, "xfail", "XF", 6, OutcomeKind::kExpected,
     "ran and failed as a skip-list entry expected"},
    {Outcome::kXpass, "xpass", "XP", 7, OutcomeKind::kMatched,
     "ran and passed although a skip-list entry expected a failure (a stale entry)"},
    {Outcome::kFlaky, "flaky", "FL", 8, OutcomeKind::kUnstable,
     "failed, then passed when rerun in a fresh worker (every attempt recorded); never a pass"},
    {Outcome::kNativeUnknown, "native_unknown", "U", 1, OutcomeKind::kMatched,
     "matched the CPU reference; whether every aten op ran natively could not be observed "
     "(docs/backends.md): never counted as native"},
    {Outcome::kUnverified, "unverified", "UV", 4, OutcomeKind::kUnverified,
     "ran without error; structure, shapes, dtypes and devices matched, but some values could not "
     "be compared (the CPU does not reproduce its own result: random or uninitialized); never a "
     "pass"},
    {Outcome::kXfailChanged, "xfail_changed", "XC", 9, OutcomeKind::kFailure,
     "ran and failed, but not as its skip-list entry records (another outcome, message or failing "
     "op): a new failure behind a known one"},
    {Outcome::kHostOnly, "host_only", "H", 2, OutcomeKind::kMatched,
     "matched the CPU reference; every aten op ran in the backend's own kernels, but one or more "
     "of them copied device data to the host and computed there (TorchNeuron's \"Host-only\"): "
     "never counted as native"},
}};

// Why a skip-list entry exists.
enum class Category {
  kUnsupportedOp,
  kDynamicShape,
  kSparse,
  kForwardAd,
  kDtype,
  kPrecision,
  kFlaky,
  kCrash,
  kGraphBreak,
  kNotRunnable,
};

using CategoryInfo = Named<Category>;

inline constexpr std::array<CategoryInfo, 10> kCategories = {{
    {Category::kUnsupportedOp, "unsupported_op", "the backend has no working kernel for the op"},
    {Category::kDynamicShape, "dynamic_shape", "needs shapes known only at run time"},
    {Category::kSparse, "sparse", "sparse layouts"},
    {Category::kForwardAd, "forward_ad", "forward-mode automatic differentiation"},
    {Category::kDtype, "dtype", "a dtype the device does not have"},
    {Category::kPrecision, "precision", "the device computes with less precision than the CPU"},
    {Category::kFlaky, "flaky", "fails only sometimes"},
    {Category::kCrash, "crash", "kills the worker: never run"},
    {Category::kGraphBreak, "graph_break", "torch.compile cannot capture the code in one graph"},
    {Category::kNotRunnable, "not_runnable",
     "the suite cannot run the case on any device, the CPU reference included (the suite's own "
     "list, not a backend's)"},
}};

// What a skip-list entry does with the cases it matches.
enum class Mode { kSkip, kXfail, kTolerance };

using ModeInfo = Named<Mode>;

inline constexpr std::array<ModeInfo, 3> kModes = {{
    {Mode::kSkip, "skip", "never run"},
    {Mode::kXfail, "xfail", "run, expected to fail"},
    {Mode::kTolerance, "tolerance", "run, its values compared with the entry's rtol and atol"},
}};

// A subject's status from the outcomes of all its cases.
enum class SubjectStatus {
  kNative,
  kFallback,
  kPartial,
  kFailing,
  kSkipped,
  kNotRun,
  kNativeUnknown,
  kHostOnly,
};

struct SubjectStatusInfo {
  SubjectStatus value;
  std::string_view name;
  char letter;  // one letter per run in the dashboard's history strings
  std::string_view meaning;
};

inline constexpr std::array<SubjectStatusInfo, 8> kSubjectStatuses = {{
    {SubjectStatus::kNative, "native", 'N', "every case matched natively"},
    {SubjectStatus::kFallback, "fallback", 'F',
     "every case matched, some through the CPU fallback"},
    {SubjectStatus::kPartial, "partial", 'P', "some cases matched, some did not"},
    {SubjectStatus::kFailing, "failing", 'X', "no case that ran matched"},
    {SubjectStatus::kSkipped, "skipped", 'S', "every case was skipped"},
    {SubjectStatus::kNotRun, "not run", '-', "the subject was not in that run"},
    {SubjectStatus::kNativeUnknown, "native_unknown", 'U',
     "every case matched, none through the fallback, but where some ran their ops could not be "
     "observed"},
    {SubjectStatus::kHostOnly, "host_only", 'H',
     "every case matched, none through the fallback, but in some a kernel of the backend computed "
     "on the host"},
}};

// How an aten op ran in a case (the results DB's op_events.route).
enum class Route { kNative, kFallback, kHostOnly };

using RouteInfo = Named<Route>;

inline constexpr std::array<RouteInfo, 3> kRoutes = {{
    {Route::kNative, "native", "a kernel of the device ran it"},
    {Route::kFallback, "fallback", "the backend's CPU fallback ran it"},
    {Route::kHostOnly, "host_only",
     "a kernel of the backend ran it, but copied device data to the host to compute it there"},
}};

// What runs an op on the device, as check-model's capture sees the dispatcher.
enum class Kernel { kDevice, kView, kComposite, kFallback };

using KernelInfo = Named<Kernel>;

inline constexpr std::array<KernelInfo, 4> kKernels = {{
    {Kernel::kDevice, "device", "a kernel registered on the device's dispatch key"},
    {Kernel::kView, "view", "a view kernel every backend shares"},
    {Kernel::kComposite, "composite", "a kernel for every backend made of other ops"},
    {Kernel::kFallback, "fallback", "none: the backend's CPU fallback"},
}};

// check-model's verdict on one op at one dtype, worst first.
enum class OpVerdict { kFailing, kFallback, kHostOnly, kUnverified, kSkipped, kUntested, kNative };

using OpVerdictInfo = Named<OpVerdict>;

inline constexpr std::array<OpVerdictInfo, 7> kOpVerdicts = {{
    {OpVerdict::kFailing, "failing", "a case's error names it and no case at that dtype matched"},
    {OpVerdict::kFallback, "fallback", "it ran only through the CPU fallback"},
    {OpVerdict::kHostOnly, "host_only",
     "it ran in the backend's kernel, but that kernel computed on the host (Host-only)"},
    {OpVerdict::kUnverified, "unverified",
     "it ran without error only in cases whose values could not be compared (unverified)"},
    {OpVerdict::kSkipped, "skipped", "its cases were skipped or expected to fail by a skip list"},
    {OpVerdict::kUntested, "untested", "no case of the run is evidence for it"},
    {OpVerdict::kNative, "native", "it ran natively in a case that matched the CPU"},
}};

// Where a run stands (the results DB's runs.status).
enum class RunStatus { kRunning, kComplete, kInterrupted };

using RunStatusInfo = Named<RunStatus>;

inline constexpr std::array<RunStatusInfo, 3> kRunStatuses = {{
    {RunStatus::kRunning, "running", "started; its cases are being recorded (or it was killed)"},
    {RunStatus::kComplete, "complete", "every planned case was recorded"},
    {RunStatus::kInterrupted, "interrupted",
     "stopped with planned cases unrecorded: --resume finishes it"},
}};

// Evidence the reports read, whatever the suite (docs/conventions.md): `where` says whose
// problem a failure is when it is not the device's.
enum class Where { kHarness, kImport };

using WhereInfo = Named<Where>;

inline constexpr std::array<WhereInfo, 2> kWheres = {{
    {Where::kHarness, "harness",
     "a problem of the harness or the CPU reference, not of the device"},
    {Where::kImport, "import", "the test file could not be imported: none of its tests ran"},
}};

// Evidence the reports read: `stage`, the step of a case that raised, where it means something
// to every suite (other stages are the suite's own words).
enum class Stage { kBuild };

using StageInfo = Named<Stage>;

inline constexpr std::array<StageInfo, 1> kStages = {{
    {Stage::kBuild, "build", "the subject could not be built: nothing of the device was tested"},
}};

// The evidence's core: the fields every suite fills the same way, read by name wherever a
// report or an expectation needs them (common/Evidence.h). Every other field of a case's
// evidence is a detail of its suite. The worker refuses a core field of another type.
enum class EvidenceField { kMessage, kExceptionType, kWhere, kStage, kFailingOp, kErrors, kSample };

struct EvidenceFieldInfo {
  EvidenceField value;
  std::string_view name;
  std::string_view type;  // "string", or "strings" (a list of them)
  std::string_view meaning;
};

inline constexpr std::array<EvidenceFieldInfo, 7> kEvidenceCore = {{
    {EvidenceField::kMessage, "message", "string", "what went wrong (or why the case was skipped)"},
    {EvidenceField::kExceptionType, "exception_type", "string", "the type of the error raised"},
    {EvidenceField::kWhere, "where", "string",
     "whose problem a failure is when not the device's: a name of the `wheres` table"},
    {EvidenceField::kStage, "stage", "string", "the step of the case that raised"},
    {EvidenceField::kFailingOp, "failing_op", "string", "the aten op the error names (aten::x)"},
    {EvidenceField::kErrors, "errors", "strings",
     "further errors behind the first, one line each (Type: message)"},
    {EvidenceField::kSample, "sample", "string", "the input the verdict was reached on, described"},
}};

// Evidence flags every suite sets the same way (true when set): `suite_skip`, a case the suite
// itself skipped (its subject lacks what the check needs; upstream's test skipped itself), which is
// neither the backend's outcome nor a skip list's.
enum class EvidenceFlag { kSuiteSkip };

using EvidenceFlagInfo = Named<EvidenceFlag>;

inline constexpr std::array<EvidenceFlagInfo, 1> kEvidenceFlags = {{
    {EvidenceFlag::kSuiteSkip, "suite_skip",
     "the suite itself skipped the case (what the check needs is missing; the test skipped "
     "itself): not the backend's outcome, not a skip list's"},
}};

// The exit code of a worker that stopped because a case exceeded the worker memory limit
// (run --max-worker-memory): its case is a crash saying so, not a mystery exit.
inline constexpr int kExitMemoryLimit = 86;

// Looking the tables up. Each table's value field equals its position (a test checks it).
template <typename Table>
constexpr const auto& info_of(const Table& table, decltype(table[0].value) value) {
  return table[static_cast<std::size_t>(value)];
}

template <typename Table>
constexpr std::optional<decltype(Table{}[0].value)> find_named(const Table& table,
                                                               std::string_view name) {
  for (const auto& row : table)
    if (row.name == name) return row.value;
  return std::nullopt;
}

// "a, b, c": the names of a table, for error messages.
template <typename Table>
std::string names_of(const Table& table) {
  std::string out;
  for (const auto& row : table) (out += out.empty() ? "" : ", ") += row.name;
  return out;
}

// Throws std::invalid_argument "unknown <what> '<name>' (known: ...)".
template <typename Table>
auto parse_named(const Table& table, std::string_view name, std::string_view what) {
  if (auto value = find_named(table, name)) return *value;
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name) +
                              "' (known: " + names_of(table) + ")");
}

inline std::string_view name(Outcome o) {
  return info_of(kOutcomes, o).name;
}
inline std::string_view name(Category c) {
  return info_of(kCategories, c).name;
}
inline std::string_view name(Mode m) {
  return info_of(kModes, m).name;
}
inline std::string_view name(SubjectStatus s) {
  return info_of(kSubjectStatuses, s).name;
}
inline std::string_view name(Route r) {
  return info_of(kRoutes, r).name;
}
inline std::string_view name(Kernel k) {
  return info_of(kKernels, k).name;
}
inline std::string_view name(OpVerdict v) {
  return info_of(kOpVerdicts, v).name;
}
inline std::string_view name(RunStatus s) {
  return info_of(kRunStatuses, s).name;
}
inline std::string_view name(Where w) {
  return info_of(kWheres, w).name;
}
inline std::string_view name(Stage s) {
  return info_of(kStages, s).name;
}
inline std::string_view name(EvidenceFlag f) {
  return info_of(kEvidenceFlags, f).name;
}
inline std::string_view name(EvidenceField f) {
  return info_of(kEvidenceCore, f).name;
}
inline Outcome parse_outcome(std::string_view text) {
  return parse_named(kOutcomes, text, "outcome");
}
inline Route parse_route(std::string_view text) {
  return parse_named(kRoutes, text, "route");
}

inline OutcomeKind kind(Outcome o) {
  return info_of(kOutcomes, o).kind;
}
// Ran and matched the CPU: pass, fallback, xpass.
inline bool is_success(Outcome o) {
  return kind(o) == OutcomeKind::kMatched;
}
// Ran and did not match, unexpectedly: fail, error, crash, timeout.
inline bool is_failure(Outcome o) {
  return kind(o) == OutcomeKind::kFailure;
}
// Ran and did not match, expectedly or not: a failure, or xfail.
inline bool did_not_match(Outcome o) {
  return is_failure(o) || kind(o) == OutcomeKind::kExpected;
}
// The worker itself died or hung (crash, timeout): not a verdict on the op's values.
inline bool is_lost_worker(Outcome o) {
  return o == Outcome::kCrash || o == Outcome::kTimeout;
}
// What a skip-list entry's `expect` may name: a failure, running through the fallback, or
// passing only on a rerun.
inline bool is_expectable(Outcome o) {
  return (is_failure(o) && o != Outcome::kXfailChanged) || o == Outcome::kFallback ||
         o == Outcome::kFlaky;
}

// Every table, as coverage.json, the dashboard and harness/vocabulary.json carry it.
nlohmann::json vocabulary_json();

// Outcomes and statuses travel in JSON by name.
void to_json(nlohmann::json& j, Outcome o);
void from_json(const nlohmann::json& j, Outcome& o);
void to_json(nlohmann::json& j, SubjectStatus s);
void to_json(nlohmann::json& j, OpVerdict v);
void from_json(const nlohmann::json& j, OpVerdict& v);

}  // namespace conform
