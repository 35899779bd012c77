// The hf suite's architecture view and op-impact ranking, on planted results.
#include "Architectures.h"

#include <gtest/gtest.h>

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

}  // namespace

TEST(Architectures, HeadlineAndOpImpactRanking) {
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
  const json view = conform::architecture_view(cases, {"Native", "OnlyIsin", "NotInThisRun"});
  EXPECT_EQ(view["headline"]["passing"], 1);
  EXPECT_EQ(view["headline"]["architectures"], 4);
  EXPECT_EQ(view["headline"]["most_used"], 2);  // names absent from the run do not count
  EXPECT_EQ(view["headline"]["most_used_passing"], 1);
  EXPECT_EQ(view["headline"]["text"],
            "1 of 4 causal-LM architectures pass forward, generate and backward natively");

  const json& ranking = view["op_impact"];
  ASSERT_EQ(ranking.size(), 2u);
  EXPECT_EQ(ranking[0]["op"], "aten::isin");
  EXPECT_EQ(ranking[0]["would_pass_if_fixed"], 1);
  EXPECT_EQ(ranking[0]["blocks"], 3);
  EXPECT_EQ(ranking[0]["architectures_unblocked"], json({"OnlyIsin"}));
  EXPECT_EQ(ranking[1]["op"], "aten::convolution_overrideable");
  EXPECT_EQ(ranking[1]["would_pass_if_fixed"], 0);
  EXPECT_EQ(ranking[1]["blocks"], 1);

  const json& rows = view["architectures"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["architecture"], "IsinAndConv");
  EXPECT_EQ(rows[0]["status"], "blocked");
  EXPECT_EQ(rows[0]["failing_ops"], json({"aten::convolution_overrideable"}));
  EXPECT_EQ(rows[2]["architecture"], "Native");
  EXPECT_EQ(rows[2]["status"], "native");
  EXPECT_EQ(rows[2]["seconds"], 2.0);
}

TEST(Architectures, AnArchitectureThatCannotBeBuiltIsCountedNotDropped) {
  json broken = case_of("Broken", "forward", "error");
  broken["evidence"]["stage"] = "build";
  broken["evidence"]["where"] = "harness";
  broken["evidence"]["message"] = "config has no field x";
  const json view = conform::architecture_view(json::array({broken}), {});
  EXPECT_EQ(view["headline"]["architectures"], 1);
  EXPECT_EQ(view["headline"]["passing"], 0);
  EXPECT_EQ(view["architectures"][0]["status"], "cannot build");
  EXPECT_EQ(view["architectures"][0]["first_error"], "build: config has no field x");
  EXPECT_TRUE(view["op_impact"].empty());  // no op to blame
}
