// The subject view and op-impact ranking, on planted results of a suite declared like hf.
#include "report/Subjects.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using nlohmann::json;

namespace {

json case_of(const std::string& arch, const std::string& check, const std::string& outcome,
             std::vector<std::string> fallback = {}, const std::string& failing_op = "") {
  json evidence = {{"peak_device_memory", 1000}};
  if (!failing_op.empty()) evidence["failing_op"] = failing_op;
  return {{"subject", arch},         {"dtype", "float32"}, {"check", check},
          {"outcome", outcome},      {"duration", 0.5},    {"evidence", evidence},
          {"fallback_ops", fallback}};
}

// A suite with hf's declaration: the checks that count, a headline subset.
conform::SuiteDescription hf_like(std::vector<std::string> most_used) {
  return conform::SuiteDescription::from_json(
      "hf",
      {{"noun", "architecture"},
       {"nouns", "causal-LM architectures"},
       {"checks", {{"forward", ""}, {"generate", ""}, {"backward", ""}, {"static_shapes", ""}}},
       {"native_checks", {"forward", "generate", "backward"}},
       {"native_phrase", "pass forward, generate and backward natively"},
       {"headlines", {{{"name", "most_used"}, {"title", "most-used"}, {"subjects", most_used}}}}});
}

}  // namespace

TEST(Subjects, HeadlineAndOpImpactRanking) {
  const json cases = {
      // Native: forward, generate and backward pass; static_shapes does not count.
      case_of("Native", "forward", "pass"),
      case_of("Native", "generate", "pass"),
      case_of("Native", "backward", "pass"),
      case_of("Native", "static_shapes", "fail"),
      // Blocked by isin alone (through the fallback): fixing isin makes it pass.
      case_of("OnlyIsin", "forward", "pass"),
      case_of("OnlyIsin", "generate", "fallback", {"aten::isin"}),
      case_of("OnlyIsin", "backward", "pass"),
      // Blocked by isin and a failing conv: fixing either alone is not enough.
      case_of("IsinAndConv", "forward", "error", {}, "aten::convolution_overrideable"),
      case_of("IsinAndConv", "generate", "fallback", {"aten::isin"}),
      case_of("IsinAndConv", "backward", "pass"),
      // A numerical failure no op explains: no single fix.
      case_of("Mismatch", "forward", "fail", {"aten::isin"}),
      case_of("Mismatch", "generate", "pass"),
      case_of("Mismatch", "backward", "pass"),
  };
  const json view = conform::subject_view(cases, hf_like({"Native", "OnlyIsin", "NotInThisRun"}));
  EXPECT_EQ(view["headline"]["subjects_native"], 1);
  EXPECT_EQ(view["headline"]["subjects"], 4);
  EXPECT_EQ(view["headline"]["text"],
            "1 of 4 causal-LM architectures pass forward, generate and backward natively");
  const json& most_used = view["headline"]["headlines"][0];
  EXPECT_EQ(most_used["subjects"], 2);  // names absent from the run do not count
  EXPECT_EQ(most_used["native"], 1);
  EXPECT_EQ(
      most_used["text"],
      "1 of 2 most-used causal-LM architectures pass forward, generate and backward natively");
  EXPECT_EQ(view["headline"]["text"],
            "1 of 4 causal-LM architectures pass forward, generate and backward natively");

  const json& ranking = view["op_impact"];
  ASSERT_EQ(ranking.size(), 2u);
  EXPECT_EQ(ranking[0]["op"], "aten::isin");
  EXPECT_EQ(ranking[0]["would_pass_if_fixed"], 1);
  EXPECT_EQ(ranking[0]["blocks"], 3);
  EXPECT_EQ(ranking[0]["subjects_unblocked"], json({"OnlyIsin"}));
  EXPECT_EQ(ranking[1]["op"], "aten::convolution_overrideable");
  EXPECT_EQ(ranking[1]["would_pass_if_fixed"], 0);
  EXPECT_EQ(ranking[1]["blocks"], 1);

  const json& rows = view["subjects"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["name"], "IsinAndConv");
  EXPECT_EQ(rows[0]["verdict"], "blocked");
  EXPECT_EQ(rows[0]["failing_ops"], json({"aten::convolution_overrideable"}));
  EXPECT_EQ(rows[2]["name"], "Native");
  EXPECT_EQ(rows[2]["verdict"], "native");
  EXPECT_EQ(rows[2]["headlines"], json({"most_used"}));
  EXPECT_EQ(rows[2]["status"], "partial");  // over every check: static_shapes failed
  EXPECT_EQ(rows[2]["seconds"], 2.0);
}

TEST(Subjects, AnArchitectureThatCannotBeBuiltIsCountedNotDropped) {
  json broken = case_of("Broken", "forward", "error");
  broken["evidence"]["stage"] = "build";
  broken["evidence"]["where"] = "harness";
  broken["evidence"]["message"] = "config has no field x";
  const json view = conform::subject_view(json::array({broken}), hf_like({}));
  EXPECT_EQ(view["headline"]["subjects"], 1);
  EXPECT_EQ(view["headline"]["subjects_native"], 0);
  EXPECT_EQ(view["subjects"][0]["verdict"], "cannot build");
  EXPECT_EQ(view["subjects"][0]["first_error"], "build: config has no field x");
  EXPECT_TRUE(view["op_impact"].empty());  // no op to blame
}

TEST(SuiteDescription, ShareCoresIsOffByDefaultAndMustBeABoolean) {
  const json checks = {{"spin", ""}};
  EXPECT_FALSE(conform::SuiteDescription::from_json("widgets", {{"checks", checks}}).share_cores);
  const auto sharing =
      conform::SuiteDescription::from_json("widgets", {{"checks", checks}, {"share_cores", true}});
  EXPECT_TRUE(sharing.share_cores);
  EXPECT_TRUE(conform::SuiteDescription::from_json("widgets", sharing.to_json()).share_cores);
  try {
    conform::SuiteDescription::from_json("widgets", {{"checks", checks}, {"share_cores", "yes"}});
    FAIL() << "a share_cores that is not a boolean was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'share_cores' must be true or false"), std::string::npos);
  }
}

TEST(SuiteDescription, NightlyRunsByDefaultAndNamesOnlyDeclaredOptions) {
  const json checks = {{"spin", ""}};
  const json options = {{"teeth", {{"type", "int"}, {"help", "teeth per gear"}}}};
  const auto plain = conform::SuiteDescription::from_json("widgets", {{"checks", checks}});
  EXPECT_TRUE(plain.nightly.runs);
  EXPECT_EQ(plain.nightly.shards, 1);
  EXPECT_FALSE(plain.to_json().contains("nightly"));  // the default is not stored
  const auto left_out =
      conform::SuiteDescription::from_json("widgets", {{"checks", checks}, {"nightly", false}});
  EXPECT_FALSE(left_out.nightly.runs);
  EXPECT_FALSE(conform::SuiteDescription::from_json("widgets", left_out.to_json()).nightly.runs);
  const json sharded = {{"shards", 3}, {"options", {{"teeth", 40}}}};
  const auto night = conform::SuiteDescription::from_json(
      "widgets", {{"checks", checks}, {"options", options}, {"nightly", sharded}});
  EXPECT_EQ(night.nightly.shards, 3);
  EXPECT_EQ(night.nightly.options["teeth"], 40);
  EXPECT_EQ(conform::SuiteDescription::from_json("widgets", night.to_json()).to_json(),
            night.to_json());
  for (const auto& [bad, says] : std::vector<std::pair<json, std::string>>{
           {{{"shards", 0}}, "'shards' must be an integer from 1 to 64"},
           {{{"options", {{"colour", "red"}}}}, "option 'colour' is not one the suite declares"},
           {{{"options", {{"teeth", json::array()}}}}, "option 'teeth' needs a number"},
           {{{"every", "night"}}, "unknown field 'every'"},
           {"yes", "'nightly' must be false or an object"}}) {
    try {
      conform::SuiteDescription::from_json(
          "widgets", {{"checks", checks}, {"options", options}, {"nightly", bad}});
      FAIL() << "accepted nightly " << bad.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}
