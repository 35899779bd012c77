// The evidence's core, read by name: what every report and expectation relies on.
#include "common/Evidence.h"

#include <gtest/gtest.h>

namespace conform {
namespace {

using nlohmann::json;

TEST(Evidence, ReadsEveryCoreFieldByName) {
  const json e = {
      {"message", "boom"},           {"exception_type", "RuntimeError"},
      {"where", "harness"},          {"stage", "build"},
      {"failing_op", "aten::histc"}, {"errors", {"ValueError: second", "KeyError: third"}},
      {"sample", "(float32[4, 5])"}, {"max_abs_error", 0.5}};
  const Evidence core = Evidence::read(e);
  EXPECT_EQ(core.message, "boom");
  EXPECT_EQ(core.exception_type, "RuntimeError");
  EXPECT_EQ(core.where, Where::kHarness);
  EXPECT_EQ(core.stage, "build");
  EXPECT_EQ(core.failing_op, "aten::histc");
  EXPECT_EQ(core.errors, (std::vector<std::string>{"ValueError: second", "KeyError: third"}));
  EXPECT_EQ(core.sample, "(float32[4, 5])");
}

TEST(Evidence, EveryCoreFieldOfTheVocabularyIsRead) {
  // A field added to the vocabulary's core without a reader here would read as absent forever.
  json e = json::object();
  for (const auto& f : kEvidenceCore)
    e[std::string(f.name)] = f.type == "strings" ? json::array({"harness"}) : json("harness");
  const Evidence core = Evidence::read(e);
  const std::vector<bool> read = {!core.message.empty(),    !core.exception_type.empty(),
                                  core.where.has_value(),   !core.stage.empty(),
                                  !core.failing_op.empty(), !core.errors.empty(),
                                  !core.sample.empty()};
  ASSERT_EQ(read.size(), kEvidenceCore.size());
  for (std::size_t i = 0; i < read.size(); ++i) EXPECT_TRUE(read[i]) << kEvidenceCore[i].name;
}

TEST(Evidence, FieldsOfAnotherTypeReadAsAbsent) {
  // What a run recorded before the core was typed stays readable.
  const json e = {{"message", 3},
                  {"where", {{"sample_index", 2}}},
                  {"stage", json::array()},
                  {"errors", "one"},
                  {"failing_op", nullptr}};
  const Evidence core = Evidence::read(e);
  EXPECT_EQ(core.message, "");
  EXPECT_FALSE(core.where.has_value());
  EXPECT_EQ(core.stage, "");
  EXPECT_TRUE(core.errors.empty());
  EXPECT_EQ(core.failing_op, "");
  EXPECT_FALSE(Evidence::read(json{{"where", "elsewhere"}}).where.has_value());
  EXPECT_EQ(Evidence::read(json::array()).message, "");
}

}  // namespace
}  // namespace conform
