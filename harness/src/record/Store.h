#pragma once

#include "common/CaseId.h"
#include "common/Ledger.h"
#include "common/Result.h"
#include "common/Vocabulary.h"
#include "record/RunInfo.h"
#include "record/Sqlite.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace conform {

// The results store: SQLite in WAL mode with a busy timeout, so several runs can share one
// file; every result is committed on its own, so a killed run loses at most the cases in
// flight. The schema is versioned (PRAGMA user_version) and migrated forward on open;
// docs/results-db.md documents it.
class Store {
 public:
  static constexpr int kSchemaVersion = 9;

  // Opens or creates the DB at `path`. Throws StoreError with one line naming the file and
  // the problem (not a database, newer schema, unwritable, ...), before changing anything.
  explicit Store(const std::string& path, bool create = true);

  // The connection, for the store's own tests and the record layer's other files
  // (ModelHistory); the rest of the harness asks the store.
  Database& db() { return db_; }
  int schema_version();

  static std::string new_run_id();
  static std::string now_utc();

  void create_run(const RunInfo& run);
  // A whole run as another store recorded it (`import`, the inverse of `query`): its record as
  // it is (id, status, times), its plan and its results, in one transaction. StoreError when the
  // DB has a run of that id already.
  void import_run(const RunInfo& run, const std::vector<CaseId>& plan,
                  std::span<const CaseResult> results);
  // Ends the run: `complete` when every planned case is recorded, else `interrupted` (what was
  // recorded stays; --resume finishes it).
  void finish_run(const std::string& run_id);
  std::optional<RunInfo> run(const std::string& id);
  // A run id, "latest" or "previous" -> the run id. Throws StoreError naming the reference.
  std::string resolve_run(const std::string& ref);
  // Every run's id, oldest first (of one suite, when given).
  std::vector<std::string> run_ids(const std::optional<std::string>& suite = std::nullopt);
  // The newest run of each suite, ordered by suite name.
  std::vector<std::string> newest_run_of_each_suite();

  // A run's digest (report/Reports.h), if one was saved since the run last changed:
  // recording a result or finishing the run forgets it.
  std::optional<nlohmann::json> digest(const std::string& run_id);
  void save_digest(const std::string& run_id, std::int64_t recorded, const nlohmann::json& digest);

  void record_plan(const std::string& run_id, const std::vector<CaseId>& cases);
  std::vector<std::string> planned(const std::string& run_id);
  std::vector<std::string> unrecorded(const std::string& run_id);
  // Commits one result (and its op events) in its own transaction. Recording a case twice
  // for one run is an error: results are never silently replaced.
  void record_result(const std::string& run_id, const CaseResult& result);
  // Many results in one transaction (skipped cases, a merge), with the same guarantees.
  void record_results(const std::string& run_id, std::span<const CaseResult> results);
  // Replaces a recorded result with what was learnt later (a late error found to be the case's:
  // schedule/Scheduler.h), in one transaction. The amendment carries what it replaces in its
  // evidence (`outcome_before`); its op events replace the old ones, which stay where it has none.
  void amend_result(const std::string& run_id, const CaseResult& result);

  // Every result of a run, with its op events, in planned order.
  std::vector<CaseResult> results(const std::string& run_id);

  // The most recent recorded duration of each case, over all runs (for shard balancing).
  std::map<std::string, double> last_durations();
  OutcomeCounts outcome_counts(const std::string& run_id);
  // Each case's outcome in each of `run_ids` (in their order; a case a run did not record is
  // absent from that run's position, so vectors can be shorter).
  std::map<std::string, std::vector<std::pair<std::string, Outcome>>> outcomes_by_case(
      const std::vector<std::string>& run_ids);
  // The newest run that recorded `case_id`, if any.
  std::optional<std::string> latest_run_with(const std::string& case_id);
  std::vector<std::pair<std::string, double>> slowest(const std::string& run_id, int n);
  // Failing cases with the largest relative error first.
  std::vector<std::pair<std::string, nlohmann::json>> worst_failures(const std::string& run_id,
                                                                     int n);
  std::int64_t recorded_count(const std::string& run_id);
  // Every aten op the runs' cases reached, per route: one case (the first by id) and how many.
  std::map<std::string, Reached> reached_ops(const std::vector<std::string>& run_ids);
  std::int64_t planned_count(const std::string& run_id);

 private:
  void migrate();
  // The writes behind create_run, record_plan and record_results, inside the caller's transaction.
  void insert_run(const RunInfo& run);
  void insert_plan(const std::string& run_id, const std::vector<CaseId>& cases);
  void insert_results(const std::string& run_id, std::span<const CaseResult> results);
  // The statement inserting one op event, prepared once for a batch, and a result's events.
  Statement insert_op_events();
  void record_op_events(Statement& insert, const std::string& run_id, const CaseResult& result);
  void forget_digest(const std::string& run_id);
  void enable_wal();
  Database db_;
};

}  // namespace conform
