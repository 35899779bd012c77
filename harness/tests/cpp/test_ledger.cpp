// The ledger's arithmetic (common/Ledger.h) and the validation of its dispositions file
// (expect/Dispositions.h).
#include "common/Ledger.h"
#include "expect/Dispositions.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace conform {
namespace {

bool has_problem(const DispositionsFile& d, const std::string& where, const std::string& text) {
  return std::any_of(d.problems.begin(), d.problems.end(), [&](const Problem& p) {
    return p.where.str() == where && p.message.find(text) != std::string::npos;
  });
}

const std::set<std::string> kKnown = {"aten::add.Tensor",    "aten::add_.Tensor", "aten::add.out",
                                      "aten::silu_backward", "aten::q_scale",     "aten::mkldnn_x",
                                      "aten::hypot_"};

TEST(Ledger, CountsReachedOverApplicable) {
  const DispositionsFile d = parse_dispositions(R"({"entries": [
    {"disposition": "not_applicable", "reason": "quantized", "overloads": ["aten::q_scale"]},
    {"disposition": "not_applicable", "reason": "mkldnn", "overloads": ["aten::mkldnn_x"]},
    {"disposition": "unreached", "reason": "no sample", "overloads": ["aten::hypot_"]}]})",
                                                "d.json", &kKnown);
  ASSERT_TRUE(d.problems.empty()) << d.problems.front().str();
  std::map<std::string, Reached> reached;
  reached["aten::add.Tensor"].first(Route::kNative) = "ops/add/float32/forward";
  reached["aten::add.Tensor"].first(Route::kFallback) = "ops/add/float32/backward";
  reached["aten::add_.Tensor"].first(Route::kFallback) = "ops/add/float32/inplace";
  reached["neuron::custom"].first(Route::kNative) =
      "ops/x/float32/forward";  // not a row: not counted
  const Ledger l = build_ledger(std::vector<std::string>(kKnown.begin(), kKnown.end()), reached,
                                d.by_overload());
  EXPECT_EQ(l.total, 7);
  EXPECT_EQ(l.native, 1);
  EXPECT_EQ(l.fallback, 1);
  EXPECT_EQ(l.not_applicable, 2);
  EXPECT_EQ(l.unreached_known, 1);
  EXPECT_EQ(l.unreached, 2);  // add.out, silu_backward
  EXPECT_EQ(l.applicable(), 5);
  EXPECT_DOUBLE_EQ(l.coverage_percent(), 40.0);
  const auto row = std::find_if(l.rows.begin(), l.rows.end(), [](const LedgerRow& r) {
    return r.overload == "aten::add.Tensor";
  });
  EXPECT_EQ(row->status, LedgerStatus::kNative);  // a native case wins over a fallback one
  EXPECT_EQ(row->case_id, "ops/add/float32/forward");
  const nlohmann::json j = ledger_json(l);
  EXPECT_EQ(j["reached"], 2);
  EXPECT_EQ(j["unreached_undisposed"], 2);
}

TEST(Ledger, AHostOnlyOverloadIsReachedButNotNative) {
  std::map<std::string, Reached> reached;
  reached["aten::sort.stable"].first(Route::kHostOnly) = "ops/sort/float32/forward";
  reached["aten::sort.stable"].first(Route::kFallback) = "ops/sort/int64/forward";
  reached["aten::mm"].first(Route::kHostOnly) = "ops/mm/float32/forward";
  reached["aten::mm"].first(Route::kNative) = "ops/mm/float64/forward";
  const Ledger l = build_ledger({"aten::sort.stable", "aten::mm"}, reached, {});
  EXPECT_EQ(l.host_only, 1);  // sort: host-only wins over the fallback
  EXPECT_EQ(l.native, 1);     // mm: a native case wins over a host-only one
  EXPECT_EQ(l.reached(), 2);
  EXPECT_EQ(l.rows[1].status, LedgerStatus::kHostOnly);
  EXPECT_EQ(l.rows[1].case_id, "ops/sort/float32/forward");
  EXPECT_EQ(ledger_json(l)["host_only"], 1);
}

TEST(Ledger, AReachedNotApplicableOverloadCountsAsReachedAndIsReported) {
  const DispositionsFile d = parse_dispositions(R"({"entries": [{"disposition": "not_applicable",
      "reason": "x", "overloads": ["aten::q_scale"]}]})",
                                                "d.json");
  std::map<std::string, Reached> reached;
  reached["aten::q_scale"].first(Route::kFallback) = "ops/q/float32/forward";
  const Ledger l = build_ledger({"aten::q_scale", "aten::hypot_"}, reached, d.by_overload());
  EXPECT_EQ(l.not_applicable, 0);
  EXPECT_EQ(l.reached(), 1);
  EXPECT_DOUBLE_EQ(l.coverage_percent(), 50.0);  // never above 100
  EXPECT_EQ(l.reached_but_not_applicable, std::vector<std::string>{"aten::q_scale"});
}

TEST(Ledger, CompositeOverloadsAreNotApplicableWhateverTheirDisposition) {
  const DispositionsFile d = parse_dispositions(R"({"entries": [{"disposition": "unreached",
      "reason": "x", "overloads": ["aten::hypot_"]}]})",
                                                "d.json");
  std::map<std::string, Reached> reached;
  reached["aten::hypot.out"].first(Route::kNative) = "ops/hypot/float32/forward";
  const Ledger l = build_ledger({"aten::hypot_", "aten::hypot.out", "aten::mm"}, reached,
                                d.by_overload(), {"aten::hypot_"});
  EXPECT_EQ(l.composite, 1);
  EXPECT_EQ(l.unreached_known, 0);
  EXPECT_EQ(l.applicable(), 2);
  EXPECT_DOUBLE_EQ(l.coverage_percent(), 50.0);
  EXPECT_EQ(l.rows[1].overload, "aten::hypot_");
  EXPECT_EQ(l.rows[1].status, LedgerStatus::kComposite);
}

TEST(Ledger, NothingApplicableIsFullCoverage) {
  EXPECT_DOUBLE_EQ(build_ledger({}, {}, DispositionsByOverload{}).coverage_percent(), 100.0);
}

TEST(Ledger, ValidationNamesFileEntryAndLine) {
  const std::string text = R"({"entries": [
    {"disposition": "not_applicable", "overloads": ["aten::q_scale"]},
    {"disposition": "maybe", "reason": "r", "overloads": ["aten::mkldnn_x"]},
    {"disposition": "unreached", "reason": "r", "overloads": ["aten::no_such", "aten::hypot_"]},
    {"disposition": "unreached", "reason": "r", "overloads": ["aten::hypot_"]},
    {"disposition": "unreached", "reason": "r", "overloads": []},
    {"disposition": "unreached", "reason": "r", "overloads": ["aten::add.out"], "extra": 1}],
   "other": 2})";
  const DispositionsFile d = parse_dispositions(text, "ledger.json", &kKnown);
  // Each problem at the entry's line and column, or at the overload name's it is about.
  EXPECT_TRUE(has_problem(d, "ledger.json:2:5", "missing \"reason\"")) << d.problems.front().str();
  EXPECT_TRUE(has_problem(d, "ledger.json:3:5", "unknown disposition 'maybe'"));
  EXPECT_TRUE(has_problem(d, "ledger.json:4:63", "'aten::no_such' is no overload"));
  EXPECT_TRUE(has_problem(d, "ledger.json:5:63",
                          "'aten::hypot_' is listed twice (first at ledger.json:4:80)"));
  EXPECT_TRUE(has_problem(d, "ledger.json:6:5", "non-empty list"));
  EXPECT_TRUE(has_problem(d, "ledger.json:7:5", "unknown field 'extra'"));
  EXPECT_TRUE(has_problem(d, "ledger.json:1:1", "unknown top-level field 'other'"));
  // An entry with a problem disposes of nothing.
  EXPECT_TRUE(d.entries.empty());
}

TEST(Ledger, ValidationReportsJsonErrorsAndMissingFiles) {
  const DispositionsFile cut = parse_dispositions("{", "f.json");
  ASSERT_EQ(cut.problems.size(), 1u);
  EXPECT_EQ(cut.problems[0].where.file, "f.json");
  EXPECT_EQ(cut.problems[0].where.line, 1);  // where the parser stopped
  EXPECT_NE(cut.problems[0].message.find("not valid JSON"), std::string::npos);
  EXPECT_TRUE(has_problem(parse_dispositions("[]", "f.json"), "f.json:1:1", "\"entries\""));
  EXPECT_TRUE(has_problem(load_dispositions("/nonexistent/ledger.json"), "/nonexistent/ledger.json",
                          "cannot read"));
}

TEST(Ledger, GroupsUnreachedByKindAndFamily) {
  EXPECT_EQ(variant_kind("aten::silu_backward.grad_input"), "backward");
  EXPECT_EQ(variant_kind("aten::hypot_"), "in-place");
  EXPECT_EQ(variant_kind("aten::eq_.Scalar"), "in-place");
  EXPECT_EQ(variant_kind("aten::hypot.out"), "out");
  EXPECT_EQ(variant_kind("aten::add.Scalar"), "Scalar");
  EXPECT_EQ(variant_kind("aten::_foo"), "private");
  EXPECT_EQ(variant_kind("aten::__ilshift__.Scalar"), "Scalar");
  EXPECT_EQ(variant_kind("aten::mm"), "functional");
  EXPECT_EQ(family("aten::hypot_.out"), "hypot");
  EXPECT_EQ(family("aten::silu_backward.grad_input"), "silu");
  EXPECT_EQ(family("aten::_log_softmax_backward_data"), "log_softmax");
  EXPECT_EQ(family("aten::__ilshift__.Scalar"), "ilshift");
  const Ledger l =
      build_ledger({"aten::hypot_", "aten::hypot.out", "aten::mm"}, {}, DispositionsByOverload{});
  const std::string s = ledger_summary(l);
  EXPECT_NE(s.find("0 of 3 applicable overloads reached (0.0%)"), std::string::npos) << s;
  EXPECT_NE(s.find("hypot 2"), std::string::npos) << s;
}

// What a run stores of its dispositions, read back, disposes of the same overloads alike; a
// malformed stored value disposes of nothing rather than of something wrong.
TEST(Ledger, StoredDispositionsReadBackTheSame) {
  const DispositionsByOverload d = {
      {"aten::q_scale", {DispositionKind::kNotApplicable, "quantized"}},
      {"aten::hypot_", {DispositionKind::kUnreached, "no sample"}}};
  const DispositionsByOverload back = dispositions_from_json(dispositions_json(d));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.at("aten::q_scale").kind, DispositionKind::kNotApplicable);
  EXPECT_EQ(back.at("aten::hypot_").reason, "no sample");
  EXPECT_TRUE(dispositions_from_json(nlohmann::json::array()).empty());
  EXPECT_TRUE(dispositions_from_json({{"aten::x", {{"disposition", "maybe"}}}}).empty());
}

}  // namespace
}  // namespace conform
