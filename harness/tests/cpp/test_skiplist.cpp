#include "expect/Skiplist.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace conform;
namespace fs = std::filesystem;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("conform-skiplist-test-" + std::to_string(::getpid()));
  const fs::path path = dir / name;
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

Skiplists load(const std::string& text, const std::string& torch = "2.13.0+cpu") {
  return load_skiplists({write("list.json", text)}, torch);
}

std::string first_problem(const std::string& text) {
  const auto lists = load(text);
  return lists.problems.empty() ? "no problem" : lists.problems.front().str();
}

const char* kGood = R"({"entries": [
  {"suite": "ops", "subject": "add", "dtype": "*", "check": ["forward", "out"], "mode": "xfail",
   "category": "precision", "reason": "bf16 rounding"},
  {"suite": "ops", "subject": "*", "dtype": "complex64", "mode": "skip", "category": "dtype",
   "reason": "no complex arithmetic on Trainium"}
]})";

}  // namespace

TEST(Skiplist, LoadsAndMatchesExactly) {
  const auto lists = load(kGood);
  ASSERT_TRUE(lists.problems.empty()) << lists.problems.front().str();
  ASSERT_EQ(lists.entries.size(), 2u);
  const Expectations x(lists.entries);
  EXPECT_EQ(x.decide(CaseId::parse("ops/add/float32/forward"))->category, Category::kPrecision);
  EXPECT_EQ(x.decide(CaseId::parse("ops/addmm/float32/forward")), nullptr);  // never by substring
  EXPECT_EQ(x.decide(CaseId::parse("ops/add/float32/backward")), nullptr);
  EXPECT_EQ(x.decide(CaseId::parse("ops/addmm/complex64/forward"))->mode, Mode::kSkip);
  EXPECT_EQ(x.decide(CaseId::parse("ops/add/complex64/out"))->category,
            Category::kPrecision);  // first entry wins
}

TEST(Skiplist, SyntaxErrorsHaveFileLineAndColumn) {
  const auto message = first_problem("{\"entries\": [\n  {\"suite\": \"ops\",,}\n]}");
  EXPECT_NE(message.find("list.json:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
}

TEST(Skiplist, EveryLintErrorIsReportedWithTheEntryLocation) {
  auto entry = [](const std::string& fields) {
    return "{\"entries\": [\n\n  {" + fields + "}\n]}";
  };
  const std::string base =
      R"("subject": "add", "mode": "xfail", "category": "precision", "reason": "r")";
  EXPECT_NE(first_problem(entry(base + R"(, "colour": "red")")).find("unknown field 'colour'"),
            std::string::npos);
  EXPECT_NE(first_problem(entry(R"("subject": "add", "mode": "xfail", "category": "precision")"))
                .find("missing 'reason'"),
            std::string::npos);
  EXPECT_NE(first_problem(
                entry(R"("subject": "add", "mode": "xfail", "category": "slow", "reason": "r")"))
                .find("unknown category 'slow'"),
            std::string::npos);
  EXPECT_NE(first_problem(
                entry(R"("subject": "add", "mode": "xfail", "category": "crash", "reason": "r")"))
                .find("must have mode \"skip\""),
            std::string::npos);
  EXPECT_NE(first_problem(
                entry(R"("subject": "add*", "mode": "skip", "category": "dtype", "reason": "r")"))
                .find("uses '*' inside a name"),
            std::string::npos);
  EXPECT_NE(first_problem(entry(base + R"(, "torch": "about 2")")).find("not a comparison"),
            std::string::npos);
  EXPECT_NE(first_problem(entry(base + R"(, "expect": "pass")")).find("not a failing outcome"),
            std::string::npos);
  EXPECT_NE(first_problem(entry(base)).find("no problem"), std::string::npos);
  EXPECT_NE(first_problem(entry(base + R"(, "colour": 1)")).find("list.json:3:3"),
            std::string::npos);
}

TEST(Skiplist, DuplicateAndShadowedEntriesAreErrors) {
  const std::string dup = R"({"entries": [
    {"subject": "add", "mode": "xfail", "category": "precision", "reason": "r"},
    {"subject": "add", "mode": "xfail", "category": "precision", "reason": "again"}]})";
  EXPECT_NE(first_problem(dup).find("duplicates the entry at"), std::string::npos);
  const std::string shadow = R"({"entries": [
    {"subject": "*", "dtype": "float64", "mode": "skip", "category": "dtype", "reason": "r"},
    {"subject": "add", "dtype": "float64", "mode": "xfail", "category": "precision", "reason": "r"}]})";
  EXPECT_NE(first_problem(shadow).find("is shadowed by the entry at"), std::string::npos);
}

// A reviewed tolerance is an entry of the same format, as upstream's DecorateInfo carries skips,
// expected failures and tolerance overrides alike: checked as every entry is, a table of its own.
TEST(Skiplist, ToleranceEntriesAreATableOfTheirOwn) {
  const auto lists = load(R"({"entries": [
    {"subject": "log2", "dtype": "bfloat16", "mode": "tolerance", "category": "precision",
     "rtol": 0.02, "reason": "fewer terms"},
    {"subject": "log2", "dtype": "bfloat16", "mode": "xfail", "category": "precision",
     "expect": "fail", "reason": "also expected to fail: an expectation, not shadowed"},
    {"subject": "*", "mode": "tolerance", "category": "precision", "atol": 0.5, "rtol": 0,
     "reason": "every other subject"}]})");
  ASSERT_TRUE(lists.problems.empty()) << lists.problems.front().str();
  const Expectations x(lists.entries);
  const CaseId log2 = CaseId::parse("ops/log2/bfloat16/forward");
  EXPECT_EQ(x.decide(log2)->mode, Mode::kXfail);  // a tolerance never decides a case
  EXPECT_EQ(x.tolerance(log2)->rtol, 0.02);
  EXPECT_FALSE(x.tolerance(log2)->atol.has_value());  // the suite's own atol stands
  EXPECT_EQ(x.tolerance(CaseId::parse("ops/add/float32/forward"))->atol, 0.5);
  EXPECT_EQ(x.decide(CaseId::parse("ops/add/float32/forward")), nullptr);
  const nlohmann::json request = tolerance_request(*x.tolerance(log2));
  EXPECT_EQ(request["rtol"], 0.02);
  EXPECT_FALSE(request.contains("atol"));
  EXPECT_EQ(request["dtype"], nlohmann::json::array({"bfloat16"}));
  EXPECT_NE(request["entry"].get<std::string>().find("list.json:2:"), std::string::npos);

  auto entry = [](const std::string& fields) {
    return R"({"entries": [{"subject": "add", "category": "precision", "reason": "r", )" + fields +
           "}]}";
  };
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"("mode": "tolerance")", "gives 'rtol', 'atol' or both"},
      {R"("mode": "tolerance", "rtol": -0.1)", "'rtol' must be a finite number >= 0"},
      {R"("mode": "tolerance", "atol": "1e-3")", "'atol' must be a finite number >= 0"},
      {R"("mode": "tolerance", "atol": true)", "'atol' must be a finite number >= 0"},
      {R"("mode": "tolerance", "rtol": 0.1, "expect": "fail")", "'expect' applies to xfail"},
      {R"("mode": "xfail", "expect": "fail", "rtol": 0.1)", "belongs to mode \"tolerance\""},
      {R"("mode": "skip", "atol": 0.1)", "belongs to mode \"tolerance\""},
  };
  for (const auto& [fields, says] : refused)
    EXPECT_NE(first_problem(entry(fields)).find(says), std::string::npos)
        << fields << ": " << first_problem(entry(fields));
  EXPECT_NE(first_problem(R"({"entries": [{"subject": "add", "category": "dtype", "reason": "r",
                                           "mode": "tolerance", "rtol": 0.1}]})")
                .find("category 'precision'"),
            std::string::npos);
  const std::string shadowed = R"({"entries": [
    {"subject": "*", "mode": "tolerance", "category": "precision", "rtol": 0.1, "reason": "r"},
    {"subject": "add", "mode": "tolerance", "category": "precision", "rtol": 0.2, "reason": "r"}]})";
  EXPECT_NE(first_problem(shadowed).find("is shadowed by the entry at"), std::string::npos);
}

// A suite's own list (not_runnable.json beside its suite.py) says what no device can run; a
// backend's says what the backend fails: neither may hold the other's entries, wherever the
// files are and in whatever order they are read.
TEST(Skiplist, NotRunnableBelongsToTheSuitesOwnListAlone) {
  const fs::path suite = fs::path(write("hf/suite.py", "")).parent_path();
  const std::string not_runnable = R"({"entries": [
  {"subject": "GitForCausalLM", "check": "backward", "mode": "skip", "category": "not_runnable",
   "reason": "no device can run it"}
]})";
  std::ofstream(suite / "not_runnable.json") << not_runnable;
  const auto own = load_skiplists({(suite / "not_runnable.json").string()}, "2.13.0");
  ASSERT_TRUE(own.problems.empty()) << own.problems.front().str();
  ASSERT_EQ(own.entries.size(), 1u);
  EXPECT_EQ(own.entries[0].suite, std::vector<std::string>{"hf"});  // the folder's suite, not any
  const Expectations x(own.entries);
  EXPECT_EQ(x.decide(CaseId::parse("hf/GitForCausalLM/float32/backward"))->category,
            Category::kNotRunnable);
  EXPECT_EQ(x.decide(CaseId::parse("ops/GitForCausalLM/float32/backward")), nullptr);

  // The same entry in a backend's list (any other file name, or a not_runnable.json without a
  // suite.py beside it).
  for (const char* name : {"list.json", "not_runnable.json"}) {
    const auto backend = load_skiplists({write(name, not_runnable)}, "2.13.0");
    ASSERT_EQ(backend.problems.size(), 1u) << name;
    EXPECT_NE(backend.problems[0].str().find(
                  ":2:3: category 'not_runnable' belongs to a suite's own list"),
              std::string::npos)
        << backend.problems[0].str();
  }
  // The suite's own list with a backend's entry, a run of it or another suite's case.
  for (const char* entry :
       {R"("subject": "Git", "mode": "skip", "category": "dtype")",
        R"("subject": "Git", "mode": "xfail", "category": "not_runnable")",
        R"("suite": "ops", "subject": "Git", "mode": "skip", "category": "not_runnable")"}) {
    std::ofstream(suite / "not_runnable.json")
        << R"({"entries": [{)" << entry << R"(, "reason": "r"}]})";
    const auto bad = load_skiplists({(suite / "not_runnable.json").string()}, "2.13.0");
    ASSERT_EQ(bad.problems.size(), 1u) << entry;
    EXPECT_NE(bad.problems[0].str().find("not_runnable.json:1:"), std::string::npos)
        << bad.problems[0].str();
  }
}

TEST(Skiplist, TorchRangesSelectEntries) {
  const std::string text = R"({"entries": [
    {"subject": "add", "mode": "xfail", "category": "precision", "reason": "old", "torch": "<2.13"},
    {"subject": "mul", "mode": "xfail", "category": "precision", "reason": "now", "torch": ">=2.13,<2.14"}]})";
  const auto lists = load(text, "2.13.0+cpu");
  ASSERT_TRUE(lists.problems.empty());
  ASSERT_EQ(lists.entries.size(), 1u);
  EXPECT_EQ(lists.entries[0].reason, "now");
  EXPECT_EQ(load(text, "2.12.1").entries[0].reason, "old");
  EXPECT_LT(compare_versions("2.9.1", "2.13"), 0);
  EXPECT_EQ(compare_versions("2.13.0+cpu", "2.13"), 0);
}

TEST(Skiplist, ExpectationsTurnObservationsIntoOutcomes) {
  Entry e;
  e.mode = Mode::kXfail;
  e.category = Category::kUnsupportedOp;
  e.reason = "r";
  e.where = {"f.json", 3, 5};
  auto observed = [](std::string_view outcome, const std::string& message = "") {
    return CaseResult{
        "ops/x/float32/forward", parse_outcome(outcome), 0.1, {{"message", message}}, {}, {}, {}};
  };
  EXPECT_EQ(apply_expectation(e, observed("error")).outcome, Outcome::kXfail);
  EXPECT_EQ(apply_expectation(e, observed("pass")).outcome, Outcome::kXpass);
  EXPECT_EQ(apply_expectation(e, observed("error")).evidence["skiplist"]["entry"], "f.json:3:5");
  // A test that skipped itself (upstream's SkipTest) neither failed nor passed: it stays a skip.
  EXPECT_EQ(apply_expectation(e, observed("skip")).outcome, Outcome::kSkip);
  e.expect_outcome = Outcome::kError;
  e.expect_message = "complex64 is not supported";
  EXPECT_EQ(
      apply_expectation(e, observed("error", "aten::add: complex64 is not supported on neuron"))
          .outcome,
      Outcome::kXfail);
  // A failure, but not the one recorded: a new failure behind the known one, whatever its kind.
  const auto different = apply_expectation(e, observed("error", "some other error"));
  EXPECT_EQ(different.outcome, Outcome::kXfailChanged);
  EXPECT_EQ(different.evidence["observed_outcome"], "error");
  EXPECT_TRUE(is_expectation_mismatch(different));
  const auto crash = apply_expectation(e, observed("crash"));
  EXPECT_EQ(crash.outcome, Outcome::kXfailChanged);
  EXPECT_EQ(crash.evidence["observed_outcome"], "crash");
  EXPECT_TRUE(is_failure(crash.outcome));  // --strict refuses it; diff and gate call it news
  // Matched through the fallback: the failure it expected is gone (xpass), not changed.
  EXPECT_EQ(apply_expectation(e, observed("fallback")).outcome, Outcome::kXpass);
  // Ran, values unseen: neither the failure nor a pass.
  EXPECT_EQ(apply_expectation(e, observed("unverified")).outcome, Outcome::kUnverified);
  // The first failing op pins a failure as well as its message.
  e.expect_failing_op = "aten::add.Tensor";
  auto named = [&](const std::string& op) {
    auto r = observed("error", "aten::add: complex64 is not supported on neuron");
    r.evidence["failing_op"] = op;
    return apply_expectation(e, r).outcome;
  };
  EXPECT_EQ(named("aten::add.Tensor"), Outcome::kXfail);
  EXPECT_EQ(named("aten::mul.Tensor"), Outcome::kXfailChanged);
  EXPECT_EQ(entry_json(e)["expect"]["failing_op"], "aten::add.Tensor");
}

TEST(Skiplist, MissingPathsAreProblems) {
  const auto lists = load_skiplists({"/nonexistent/skiplists"}, "2.13.0");
  ASSERT_EQ(lists.problems.size(), 1u);
  EXPECT_NE(lists.problems[0].message.find("no such skip-list"), std::string::npos);
}

TEST(Skiplist, SubjectsAreCheckedAgainstEverySuiteAnEntryNames) {
  const auto lists = load(R"({"entries": [
  {"suite": "ops", "subject": "add", "mode": "skip", "category": "dtype", "reason": "r"},
  {"suite": "optim", "subject": "Adamm", "mode": "skip", "category": "dtype", "reason": "r"},
  {"suite": ["ops", "optim"], "subject": ["SGD", "sinn"], "mode": "skip", "category": "dtype",
   "reason": "r"},
  {"subject": "mul", "mode": "skip", "category": "dtype", "reason": "r"},
  {"suite": "upstream", "subject": "test_torch", "mode": "skip", "category": "dtype",
   "reason": "r"},
  {"suite": ["optim", "upstream"], "subject": "nothing", "mode": "skip", "category": "dtype",
   "reason": "r"}
]})");
  ASSERT_TRUE(lists.problems.empty()) << lists.problems.front().str();
  EXPECT_EQ(suites_named(lists.entries, "ops"),
            (std::set<std::string>{"ops", "optim", "upstream"}));
  const std::map<std::string, std::set<std::string>> listed{{"ops", {"add", "mul"}},
                                                            {"optim", {"SGD", "Adam"}}};
  const SubjectCheck check = check_subjects(lists.entries, listed, "ops", "2.13.0");
  ASSERT_EQ(check.problems.size(), 2u);
  EXPECT_EQ(check.problems[0].where.line, 3);
  EXPECT_EQ(check.problems[0].message,
            "subject 'Adamm' names no case of suite 'optim' in torch 2.13.0");
  EXPECT_EQ(check.problems[1].where.line, 4);
  EXPECT_EQ(check.problems[1].message,
            "subject 'sinn' names no case of suites 'ops', 'optim' in torch 2.13.0");
  // "*" is the default suite; entries naming a suite not listed are counted, not judged.
  EXPECT_EQ(check.checked, 4u);
  EXPECT_EQ(check.unchecked, (std::map<std::string, std::size_t>{{"upstream", 2}}));
}
