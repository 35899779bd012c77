#include "record/ModelHistory.h"
#include "record/Store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

using conform::CaseId;
using conform::CaseResult;
using conform::Outcome;
using conform::RunInfo;
using conform::Store;
using conform::StoreError;

namespace fs = std::filesystem;

namespace {

std::string temp_db(const char* name) {
  const fs::path dir =
      fs::temp_directory_path() / ("conform-store-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  fs::remove(path);
  fs::remove(path.string() + "-wal");
  fs::remove(path.string() + "-shm");
  return path.string();
}

RunInfo make_run(const std::string& id, const std::string& started) {
  RunInfo r;
  r.id = id;
  r.suite = "ops";
  r.started_at = started;
  r.host = "h";
  r.torch_version = "2.13.0";
  r.backend_module = "torch_neuronsim";
  r.backend_version = "0.1.0";
  r.harness_version = "0.1.0";
  r.device = "neuron";
  r.command = "test";
  return r;
}

std::vector<CaseId> plan() {
  return {{"ops", "add", "float32", "forward"},
          {"ops", "mul", "float32", "forward"},
          {"ops", "sub", "float32", "forward"}};
}

}  // namespace

TEST(Store, CreatesVersionedSchema) {
  Store store(temp_db("schema.db"));
  EXPECT_EQ(store.schema_version(), Store::kSchemaVersion);
  auto st = store.db().prepare("PRAGMA journal_mode");
  st.step();
  EXPECT_EQ(st.text(0), "wal");
}

TEST(Store, RecordsResultsAndTracksWhatIsLeft) {
  const auto path = temp_db("record.db");
  {
    Store store(path);
    store.create_run(make_run("r1", "2026-01-01T00:00:00.000Z"));
    store.record_plan("r1", plan());
    CaseResult r{"ops/add/float32/forward", Outcome::kFallback,        0.25,
                 {{"max_abs_error", 0.0}},  {{"aten::add.Tensor", 3}}, {{"aten::erfinv.out", 1}},
                 {{"aten::sort.stable", 2}}};
    store.record_result("r1", r);
    EXPECT_EQ(store.unrecorded("r1"),
              (std::vector<std::string>{"ops/mul/float32/forward", "ops/sub/float32/forward"}));
    // A case is never recorded twice for one run.
    EXPECT_THROW(store.record_result("r1", r), StoreError);
  }
  Store reopened(path);  // survives reopening
  const auto results = reopened.results("r1");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome, Outcome::kFallback);
  EXPECT_EQ(results[0].native_ops.at("aten::add.Tensor"), 3);
  EXPECT_EQ(results[0].fallback_ops.at("aten::erfinv.out"), 1);
  EXPECT_EQ(results[0].host_only_ops.at("aten::sort.stable"), 2);
  EXPECT_EQ(reopened.outcome_counts("r1").at(Outcome::kFallback), 1);
  EXPECT_DOUBLE_EQ(reopened.last_durations().at("ops/add/float32/forward"), 0.25);
}

// A report or `skiplist update` may read a run that is still recording: each read sees whole
// cases (a result with its op events), never op events of a case whose result it did not see.
TEST(Store, ReadsARunInProgressConsistently) {
  const auto path = temp_db("concurrent.db");
  constexpr int kCases = 400;
  {
    Store store(path);
    store.create_run(make_run("r1", "2026-01-01T00:00:00.000Z"));
    std::vector<CaseId> cases;
    for (int i = 0; i < kCases; ++i) {
      cases.push_back({"ops", "op" + std::to_string(i), "float32", "forward"});
    }
    store.record_plan("r1", cases);
  }
  std::atomic<bool> done{false};
  std::thread writer([&] {
    Store store(path);
    for (int i = 0; i < kCases; ++i) {
      store.record_result("r1", CaseResult{"ops/op" + std::to_string(i) + "/float32/forward",
                                           Outcome::kPass,
                                           0.01,
                                           {},
                                           {{"aten::add.Tensor", 1}},
                                           {},
                                           {}});
    }
    done = true;
  });
  Store reader(path);
  std::size_t reads = 0;
  std::string problem;
  while ((!done || reads == 0) && problem.empty()) {
    try {
      for (const CaseResult& r : reader.results("r1")) {
        if (r.native_ops.size() != 1) problem = r.case_id + " read without its op events";
      }
    } catch (const std::exception& e) {
      problem = e.what();
    }
    ++reads;
  }
  writer.join();
  EXPECT_EQ(problem, "");
  EXPECT_EQ(reader.results("r1").size(), static_cast<std::size_t>(kCases));
}

TEST(Store, ResolvesLatestAndPrevious) {
  Store store(temp_db("resolve.db"));
  EXPECT_THROW(store.resolve_run("latest"), StoreError);
  store.create_run(make_run("old", "2026-01-01T00:00:00.000Z"));
  store.create_run(make_run("new", "2026-01-02T00:00:00.000Z"));
  EXPECT_EQ(store.resolve_run("latest"), "new");
  EXPECT_EQ(store.resolve_run("previous"), "old");
  EXPECT_EQ(store.resolve_run("old"), "old");
  try {
    store.resolve_run("nope");
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("no run 'nope'"), std::string::npos);
  }
}

TEST(Store, RejectsUnknownOutcomeAtTheSchemaLevel) {
  Store store(temp_db("outcome.db"));
  store.create_run(make_run("r", "2026-01-01T00:00:00.000Z"));
  store.record_plan("r", plan());
  // The harness cannot name an unknown outcome (common/Vocabulary.h); another writer of the
  // file can, and the schema refuses it.
  EXPECT_THROW(store.db().exec("INSERT INTO results VALUES ('r', 'ops/add/float32/forward', "
                               "'great', 0, '{}', '2026-01-01T00:00:00.000Z')"),
               StoreError);
  EXPECT_TRUE(store.results("r").empty());  // the failed transaction left nothing behind
}

TEST(Store, CorruptFileIsRefusedUntouched) {
  const auto path = temp_db("corrupt.db");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(4096, 'x');
  }
  try {
    Store store(path);
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a usable results database"), std::string::npos)
        << e.what();
  }
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, std::string(4096, 'x'));
}

TEST(Store, NewerSchemaIsRefused) {
  const auto path = temp_db("newer.db");
  {
    Store store(path);
    store.db().exec("PRAGMA user_version = 99");
  }
  try {
    Store store(path);
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99, newer"), std::string::npos)
        << e.what();
  }
}

TEST(Store, MissingFileIsNotCreatedWhenAskedNotTo) {
  const auto path = temp_db("absent.db");
  EXPECT_THROW(Store(path, false), StoreError);
  EXPECT_FALSE(fs::exists(path));
}

TEST(Store, MigratesAVersion1FileKeepingItsRuns) {
  const std::string path = temp_db("v1.db");
  {
    conform::Database db(path, true);
    db.exec(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, suite TEXT NOT NULL, status TEXT NOT NULL, "
        "started_at TEXT NOT NULL, ended_at TEXT, label TEXT, seed INTEGER NOT NULL, host TEXT NOT "
        "NULL, torch_version TEXT NOT NULL, backend_module TEXT NOT NULL, backend_version TEXT NOT "
        "NULL, harness_version TEXT NOT NULL, device TEXT NOT NULL, shard TEXT, command TEXT NOT "
        "NULL);"
        "INSERT INTO runs VALUES ('r1', 'ops', 'complete', '2026-01-01T00:00:00.000Z', NULL, NULL, "
        "0, 'h', '2.13.0', 'm', '1', '0.1.0', 'neuron', NULL, 'old');"
        // v1's cases and results, with a result that must survive v4's rebuild of the table.
        "CREATE TABLE cases (id TEXT PRIMARY KEY, suite TEXT NOT NULL, subject TEXT NOT NULL, "
        "dtype TEXT NOT NULL, check_name TEXT NOT NULL);"
        "INSERT INTO cases VALUES ('ops/add/float32/forward', 'ops', 'add', 'float32', 'forward');"
        "CREATE TABLE results (run_id TEXT NOT NULL, case_id TEXT NOT NULL, outcome TEXT NOT NULL "
        "CHECK (outcome IN ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', "
        "'xfail', 'xpass')), duration REAL NOT NULL, evidence TEXT NOT NULL, recorded_at TEXT NOT "
        "NULL, PRIMARY KEY (run_id, case_id));"
        "INSERT INTO results VALUES ('r1', 'ops/add/float32/forward', 'pass', 0.5, '{}', "
        "'2026-01-01T00:00:01.000Z');"
        "CREATE TABLE op_events (run_id TEXT NOT NULL, case_id TEXT NOT NULL, op TEXT NOT NULL, "
        "route TEXT NOT NULL CHECK (route IN ('native', 'fallback')), calls INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, case_id, op, route), FOREIGN KEY (run_id, case_id) REFERENCES "
        "results(run_id, case_id));"
        "INSERT INTO op_events VALUES ('r1', 'ops/add/float32/forward', 'aten::add.Tensor', "
        "'native', 2);"
        "PRAGMA user_version = 1;");
  }
  Store store(path);
  EXPECT_EQ(store.schema_version(), Store::kSchemaVersion);
  const auto run = store.run("r1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->command, "old");
  EXPECT_EQ(run->backend_info, nlohmann::json::object());
  // v3: a run of a suite that existed before gets what that suite declared then.
  EXPECT_EQ(run->suite_info.value("noun", ""), "OpInfo");
  // v4: the results table rebuilt for `flaky`, its rows kept.
  EXPECT_EQ(store.outcome_counts("r1").at(Outcome::kPass), 1);
  // v5: no suite options before there were any.
  EXPECT_EQ(run->suite_options, nlohmann::json::object());
  // v6: no recorded model checks, and one can be recorded against the migrated run.
  EXPECT_TRUE(model_checks(store).empty());
  record_model_check(store, {"hf:LlamaForCausalLM",
                             "abc",
                             "2026-01-02T00:00:00.000Z",
                             "2.13.0",
                             "m",
                             "1",
                             "0.1.0",
                             "r1",
                             1,
                             "runs with ops on the fallback",
                             {{"ops", 1}}});
  EXPECT_EQ(model_checks(store, "llama").size(), 1u);
  // v9: the op events kept, and the route host_only taken.
  auto events = store.db().prepare("SELECT op, route, calls FROM op_events");
  ASSERT_TRUE(events.step());
  EXPECT_EQ(events.text(0) + " " + events.text(1) + " " + std::to_string(events.integer(2)),
            "aten::add.Tensor native 2");
  EXPECT_NO_THROW(store.db().exec(
      "INSERT INTO op_events VALUES ('r1', 'ops/add/float32/forward', 'aten::sort', 'host_only', "
      "1)"));
}

TEST(Store, KeepsModelChecksByModelOldestFirst) {
  Store store(temp_db("models.db"));
  store.create_run(make_run("r1", "2026-01-01T00:00:00.000Z"));
  const auto check = [&](const std::string& key, const std::string& at, int exit_code) {
    record_model_check(store, {key,
                               "h",
                               at,
                               "2.13.0",
                               "m",
                               "1",
                               "0.1.0",
                               "r1",
                               exit_code,
                               "v",
                               {{"exit_code", exit_code}}});
  };
  check("script:/m.py:build", "2026-01-03T00:00:00.000Z", 0);
  check("hf:LlamaForCausalLM", "2026-01-02T00:00:00.000Z", 2);
  check("hf:LlamaForCausalLM", "2026-01-01T00:00:00.000Z", 1);
  const auto all = model_checks(store);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].model_key, "hf:LlamaForCausalLM");
  EXPECT_EQ(all[0].exit_code, 1);  // oldest first within a model
  EXPECT_EQ(all[1].exit_code, 2);
  EXPECT_EQ(all[1].result["exit_code"], 2);
  EXPECT_EQ(model_checks(store, "SCRIPT").size(), 1u);  // any case
  // A check must name a run that exists: the evidence stays in the DB.
  EXPECT_THROW(
      record_model_check(store, {"k", "h", "t", "2", "m", "1", "0", "no-such-run", 0, "v", {}}),
      StoreError);
}

TEST(Store, KeepsTheOptionsARunGaveItsSuite) {
  Store store(temp_db("options.db"));
  RunInfo run = make_run("r1", "2026-01-01T00:00:00.000Z");
  run.suite_options = {{"pytorch_test_dir", "/src/pytorch"}, {"test_files", "test_view_ops.py"}};
  store.create_run(run);
  EXPECT_EQ(store.run("r1")->suite_options, run.suite_options);
}

TEST(Store, ADigestOfFewerResultsIsStale) {
  Store store(temp_db("digest.db"));
  RunInfo run = make_run("r1", "2026-01-01T00:00:00.000Z");
  run.backend_info = {{"native_ops", {"aten::add.Tensor"}}};
  store.create_run(run);
  store.record_plan("r1", plan());
  store.record_result("r1", CaseResult{plan()[0].str(), Outcome::kPass, 0.1, {}, {}, {}, {}});
  EXPECT_EQ(store.run("r1")->backend_info, run.backend_info);
  store.save_digest("r1", 1, {{"n", 1}});
  EXPECT_EQ(store.digest("r1"), nlohmann::json({{"n", 1}}));
  store.record_result("r1", CaseResult{plan()[1].str(), Outcome::kFail, 0.1, {}, {}, {}, {}});
  EXPECT_FALSE(store.digest("r1"));  // the run gained a result since: recompute
  EXPECT_EQ(store.run_ids(), std::vector<std::string>{"r1"});
  EXPECT_TRUE(store.run_ids(std::string("hf")).empty());
}

// `query` prints what the store read in the worker's shape: reading it back gives the same result.
TEST(Store, AResultReadBackInTheWorkersShapeIsTheSameResult) {
  const CaseResult r{
      "ops/add/float32/forward", Outcome::kFallback,        0.25,
      {{"max_abs_error", 0.5}},  {{"aten::add.Tensor", 3}}, {{"aten::erfinv.out", 1}},
                 {{"aten::sort.stable", 2}}};
  const CaseResult back = CaseResult::from_worker_json(r.to_json());
  EXPECT_EQ(back.case_id, r.case_id);
  EXPECT_EQ(back.outcome, r.outcome);
  EXPECT_DOUBLE_EQ(back.duration, r.duration);
  EXPECT_EQ(back.evidence, r.evidence);
  EXPECT_EQ(back.native_ops, r.native_ops);
  EXPECT_EQ(back.fallback_ops, r.fallback_ops);
  EXPECT_EQ(r.to_json()["outcome"], "fallback");
}

TEST(Store, ARunAsJsonHasItsWallTimeOnlyOnceEnded) {
  RunInfo run = make_run("r1", "2026-01-01T00:00:00.000Z");
  EXPECT_TRUE(conform::run_json(run)["duration_seconds"].is_null());
  run.ended_at = "2026-01-01T00:01:01.500Z";
  const auto j = conform::run_json(run);
  EXPECT_DOUBLE_EQ(j["duration_seconds"].get<double>(), 61.5);
  EXPECT_EQ(j["torch"], "2.13.0");
  EXPECT_EQ(j["id"], "r1");
}

TEST(Store, ARunImportedFromItsJsonIsTheSameRunWholeOrNotAtAll) {
  RunInfo run = make_run("r1", "2026-01-01T00:00:00.000Z");
  run.status = "interrupted";
  run.ended_at = "2026-01-01T00:01:00.000Z";
  run.label = "nightly";
  run.backend_info = {{"tracking", true}};
  run.suite_options = {{"world_size", "2"}};
  nlohmann::json record = conform::run_json(run);
  record["backend_info"] = run.backend_info;
  record["suite_info"] = run.suite_info;
  record["suite_options"] = run.suite_options;
  const RunInfo back = conform::run_from_json(record);
  EXPECT_EQ(conform::run_json(back), conform::run_json(run));
  EXPECT_EQ(back.backend_info, run.backend_info);
  EXPECT_EQ(back.suite_options, run.suite_options);

  const std::string path = temp_db("import.db");
  Store store(path);
  const std::vector<CaseResult> results = {
      {"ops/add/float32/forward", Outcome::kPass, 0.5, {}, {{"aten::add.Tensor", 1}}, {}, {}}};
  store.import_run(back, plan(), results);
  EXPECT_EQ(store.run("r1")->status, "interrupted");  // as recorded, not as finished here
  EXPECT_EQ(store.run("r1")->ended_at, run.ended_at);
  EXPECT_EQ(store.unrecorded("r1").size(), 2u);
  EXPECT_EQ(store.results("r1")[0].native_ops.at("aten::add.Tensor"), 1);
  // A second import of the id is refused, and a run that fails half way leaves nothing behind.
  EXPECT_THROW(store.import_run(back, plan(), results), StoreError);
  RunInfo other = make_run("r2", "2026-01-02T00:00:00.000Z");
  const std::vector<CaseResult> twice = {results[0], results[0]};
  EXPECT_ANY_THROW(store.import_run(other, plan(), twice));
  EXPECT_FALSE(store.run("r2").has_value());
  EXPECT_EQ(store.run_ids(), std::vector<std::string>{"r1"});

  record.erase("device");
  EXPECT_THROW(
      {
        try {
          conform::run_from_json(record);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "no field 'device'");
          throw;
        }
      },
      std::invalid_argument);
}
