#include "common/CaseId.h"
#include "common/Result.h"

#include <gtest/gtest.h>

using conform::CaseId;

TEST(CaseId, ParsesFourFields) {
  const auto id = CaseId::parse("ops/nn.functional.conv2d/bfloat16/backward");
  EXPECT_EQ(id.suite, "ops");
  EXPECT_EQ(id.subject, "nn.functional.conv2d");
  EXPECT_EQ(id.dtype, "bfloat16");
  EXPECT_EQ(id.check, "backward");
  EXPECT_EQ(id.str(), "ops/nn.functional.conv2d/bfloat16/backward");
  EXPECT_EQ(CaseId::parse("device/copy.noncontiguous/-/-").check, "-");
}

TEST(CaseId, RejectsMalformedIdsWithAReason) {
  auto message = [](const char* text) {
    try {
      CaseId::parse(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("ops/add/float32").find("has 3 field(s)"), std::string::npos);
  EXPECT_NE(message("ops/add/float32/forward/x").find("has 5 field(s)"), std::string::npos);
  EXPECT_NE(message("ops//float32/forward").find("empty subject"), std::string::npos);
  EXPECT_NE(message("ops/a b/float32/forward").find("space"), std::string::npos);
}

TEST(CaseResult, ParsesWorkerLinesAndRejectsUnknownOutcomes) {
  auto r = conform::CaseResult::from_worker_json(nlohmann::json::parse(
      R"({"case":"ops/add/float32/forward","outcome":"fallback","duration":0.5,
          "evidence":{"max_abs_error":0.0},"native_ops":{"aten::add.Tensor":2},"fallback_ops":{"aten::x":1}})"));
  EXPECT_EQ(r.outcome, conform::Outcome::kFallback);
  EXPECT_EQ(r.native_ops.at("aten::add.Tensor"), 2);
  EXPECT_EQ(r.fallback_ops.at("aten::x"), 1);
  EXPECT_THROW(conform::CaseResult::from_worker_json(
                   nlohmann::json::parse(R"({"case":"a/b/c/d","outcome":"great","duration":1})")),
               std::runtime_error);
  EXPECT_THROW(
      conform::CaseResult::from_worker_json(nlohmann::json::parse(R"({"outcome":"pass"})")),
      std::runtime_error);
}
