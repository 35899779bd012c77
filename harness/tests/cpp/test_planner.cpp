#include "plan/Planner.h"

#include <gtest/gtest.h>

using conform::CaseId;
using conform::select_cases;
using conform::Selection;

namespace {
std::vector<CaseId> listing() {
  std::vector<CaseId> out;
  for (const char* subject : {"add", "addmm", "mul", "nn.functional.relu"}) {
    for (const char* dtype : {"float32", "bfloat16"}) {
      for (const char* check : {"forward", "backward"})
        out.push_back({"ops", subject, dtype, check});
    }
  }
  return out;
}
}  // namespace

TEST(Planner, RegexIsSearchedInTheSubject) {
  EXPECT_EQ(select_cases(listing(), {"^(add|mul)$", {}, {}}).size(), 8u);  // not addmm
  EXPECT_EQ(select_cases(listing(), {"add", {}, {}}).size(), 8u);          // add and addmm
  EXPECT_EQ(select_cases(listing(), {"relu", {}, {}}).size(), 4u);
  EXPECT_EQ(select_cases(listing(), {"", {}, {}}).size(), 16u);
}

TEST(Planner, DtypeAndCheckFilters) {
  const auto picked = select_cases(listing(), {"^add$", {"bfloat16"}, {"forward"}});
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_EQ(picked[0].str(), "ops/add/bfloat16/forward");
}

TEST(Planner, ExplainsWhatMatchedNothing) {
  auto message = [](const Selection& s) {
    try {
      select_cases(listing(), s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({"^nope$", {}, {}}).find("--ops '^nope$' matches no subject"),
            std::string::npos);
  EXPECT_NE(message({"", {"float64"}, {}}).find("--dtypes float64"), std::string::npos);
  EXPECT_NE(message({"", {}, {"out"}}).find("--checks out"), std::string::npos);
  EXPECT_NE(message({"(", {}, {}}).find("not a valid regular expression"), std::string::npos);
}

TEST(Planner, DuplicateIdsAreAnError) {
  auto cases = listing();
  cases.push_back(cases.front());
  EXPECT_THROW(select_cases(cases, {}), std::invalid_argument);
}
