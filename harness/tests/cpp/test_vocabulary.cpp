// The vocabulary is defined once (common/Vocabulary.h); every other place that spells it out
// must agree: the results DB's CHECK, coverage.schema.json, skiplists/schema.json and the
// worker's harness/vocabulary.json (regenerate it with UPDATE_VOCABULARY=1).
#include "common/Environment.h"
#include "common/Files.h"
#include "common/Vocabulary.h"
#include "expect/Skiplist.h"
#include "record/Store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

using namespace conform;
using nlohmann::json;

namespace {

template <typename Table>
std::set<std::string> names(const Table& table) {
  std::set<std::string> out;
  for (const auto& row : table) out.insert(std::string(row.name));
  return out;
}

std::set<std::string> expectable() {
  std::set<std::string> out;
  for (const auto& o : kOutcomes)
    if (is_expectable(o.value)) out.insert(std::string(o.name));
  return out;
}

json source_json(const std::string& relative) {
  return read_json_file(data_root() + "/" + relative, "test input");
}

}  // namespace

TEST(Vocabulary, TablesAreIndexedByValueWithUniqueNames) {
  for (std::size_t i = 0; i < kOutcomes.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kOutcomes[i].value), i) << kOutcomes[i].name;
  for (std::size_t i = 0; i < kCategories.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kCategories[i].value), i) << kCategories[i].name;
  for (std::size_t i = 0; i < kModes.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kModes[i].value), i) << kModes[i].name;
  for (std::size_t i = 0; i < kSubjectStatuses.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kSubjectStatuses[i].value), i) << kSubjectStatuses[i].name;
  for (std::size_t i = 0; i < kRunStatuses.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kRunStatuses[i].value), i) << kRunStatuses[i].name;
  for (std::size_t i = 0; i < kWheres.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kWheres[i].value), i) << kWheres[i].name;
  for (std::size_t i = 0; i < kStages.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kStages[i].value), i) << kStages[i].name;
  for (std::size_t i = 0; i < kEvidenceFlags.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kEvidenceFlags[i].value), i) << kEvidenceFlags[i].name;
  for (std::size_t i = 0; i < kEvidenceCore.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kEvidenceCore[i].value), i) << kEvidenceCore[i].name;
  EXPECT_EQ(names(kRunStatuses).size(), kRunStatuses.size());
  EXPECT_EQ(names(kWheres).size(), kWheres.size());
  EXPECT_EQ(names(kOutcomes).size(), kOutcomes.size());
  std::set<int> severities;
  std::set<std::string> letters;
  for (const auto& o : kOutcomes)
    severities.insert(o.severity), letters.insert(std::string(o.letters));
  EXPECT_EQ(severities.size(), kOutcomes.size()) << "severity orders outcomes: no ties";
  EXPECT_EQ(letters.size(), kOutcomes.size());
  std::set<char> status_letters;
  for (const auto& s : kSubjectStatuses) status_letters.insert(s.letter);
  EXPECT_EQ(status_letters.size(), kSubjectStatuses.size());
}

TEST(Vocabulary, ParsingNamesTheUnknownAndTheKnown) {
  EXPECT_EQ(parse_outcome("xpass"), Outcome::kXpass);
  try {
    parse_outcome("passed");
    FAIL() << "an unknown outcome parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(
        e.what(),
        "unknown outcome 'passed' (known: pass, fallback, fail, error, crash, timeout, "
        "skip, xfail, xpass, flaky, native_unknown, unverified, xfail_changed, host_only)");
  }
  EXPECT_TRUE(is_success(Outcome::kXpass) && !is_success(Outcome::kSkip));
  // unverified: neither a match nor a failure (values went uncompared), never a pass
  EXPECT_TRUE(!is_success(Outcome::kUnverified) && !did_not_match(Outcome::kUnverified));
  EXPECT_TRUE(did_not_match(Outcome::kXfail) && !is_failure(Outcome::kXfail));
}

TEST(Vocabulary, TheResultsDatabaseCheckAgrees) {
  const auto path =
      std::filesystem::temp_directory_path() / ("vocabulary-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  {
    Store store(path.string());
    // The names a table's CHECK (column IN (...)) allows.
    const auto in_check = [&](const std::string& table, const std::string& column) {
      auto st = store.db().prepare("SELECT sql FROM sqlite_master WHERE name = ?1");
      st.bind(1, table);
      std::set<std::string> out;
      if (!st.step()) return out;
      const std::string sql = st.text(0);
      std::smatch in_list;
      if (!std::regex_search(sql, in_list, std::regex(column + R"( IN\s*\(([^)]*)\))"))) return out;
      const std::string list = in_list[1];
      const std::regex quoted("'([^']*)'");
      for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted);
           it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
      return out;
    };
    EXPECT_EQ(in_check("results", "outcome"), names(kOutcomes));
    EXPECT_EQ(in_check("runs", "status"), names(kRunStatuses));
    EXPECT_EQ(in_check("op_events", "route"), names(kRoutes));
  }
  std::filesystem::remove(path);
}

TEST(Vocabulary, TheCoverageSchemaAgrees) {
  const json schema = source_json("reports/coverage.schema.json");
  EXPECT_EQ(schema["$defs"]["outcome"]["enum"].get<std::set<std::string>>(), names(kOutcomes));
  EXPECT_EQ(schema["$defs"]["status"]["enum"].get<std::set<std::string>>(), [] {
    auto all = names(kSubjectStatuses);
    all.erase(std::string(name(SubjectStatus::kNotRun)));  // the dashboard's only
    return all;
  }());
  const json& run = schema["properties"]["run"]["properties"];
  EXPECT_EQ(run["status"]["enum"].get<std::set<std::string>>(), names(kRunStatuses));
}

TEST(Vocabulary, TheSkipListSchemaAgrees) {
  const json schema = source_json("skiplists/schema.json");
  const json& entry = schema["$defs"]["entry"]["properties"];
  EXPECT_EQ(entry["category"]["enum"].get<std::set<std::string>>(), names(kCategories));
  EXPECT_EQ(entry["mode"]["enum"].get<std::set<std::string>>(), names(kModes));
  EXPECT_EQ(entry["expect"]["oneOf"][0]["enum"].get<std::set<std::string>>(), expectable());
  EXPECT_EQ(
      entry["expect"]["oneOf"][1]["properties"]["outcome"]["enum"].get<std::set<std::string>>(),
      expectable());
}

TEST(Vocabulary, TheSkipListReaderKnowsTheSchemasFields) {
  const json schema = source_json("skiplists/schema.json");
  std::set<std::string> file_fields, entry_fields;
  for (const auto& [key, _] : schema["properties"].items()) file_fields.insert(key);
  for (const auto& [key, _] : schema["$defs"]["entry"]["properties"].items())
    entry_fields.insert(key);
  EXPECT_EQ(file_fields, skiplist_file_fields());
  EXPECT_EQ(entry_fields, skiplist_entry_fields());
}

TEST(Vocabulary, TheWorkersCopyIsCurrent) {
  const std::string path = data_root() + "/harness/vocabulary.json";
  const json current = vocabulary_json();
  if (std::getenv("UPDATE_VOCABULARY")) write_file(path, current.dump(2) + "\n");
  EXPECT_EQ(read_json_file(path, "vocabulary"), current)
      << path << " is out of date: run the test with UPDATE_VOCABULARY=1 and commit the file";
}
