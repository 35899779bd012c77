#include "record/Store.h"

#include "common/Text.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <random>
#include <string_view>
#include <thread>

namespace conform {
namespace {

// Schema migrations: kMigrations[v] takes a DB from user_version v to v + 1.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  label TEXT,
  seed INTEGER NOT NULL,
  host TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  backend_module TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  device TEXT NOT NULL,
  shard TEXT,
  command TEXT NOT NULL
);
CREATE TABLE cases (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  subject TEXT NOT NULL,
  dtype TEXT NOT NULL,
  check_name TEXT NOT NULL
);
CREATE TABLE planned (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
CREATE TABLE results (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
CREATE INDEX results_by_case ON results(case_id);
CREATE TABLE op_events (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  op TEXT NOT NULL,
  route TEXT NOT NULL CHECK (route IN ('native', 'fallback')),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id, op, route),
  FOREIGN KEY (run_id, case_id) REFERENCES results(run_id, case_id)
);
)sql",
    // v2: what the backend said of itself (declared native ops, ...), and per-run digests the
    // dashboard reads instead of rescanning every result of every night.
    R"sql(
ALTER TABLE runs ADD COLUMN backend_info TEXT NOT NULL DEFAULT '{}';
CREATE TABLE run_digests (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  recorded INTEGER NOT NULL,
  digest TEXT NOT NULL
);
)sql",
    // v3: what the suite declared of itself when the run listed it (reports render from it).
    // Runs recorded before v3 get what their suite declared when v3 was made.
    R"sql(
ALTER TABLE runs ADD COLUMN suite_info TEXT NOT NULL DEFAULT '{}';
UPDATE runs SET suite_info = '{"noun":"OpInfo","nouns":"OpInfos","checks":{"forward":"each sample input on the device against the CPU","out":"the out= variant","inplace":"the in-place variant","backward":"gradients of every input","forward_ad":"forward-mode jvp"},"native_phrase":"run natively at every dtype and check"}' WHERE suite = 'ops';
UPDATE runs SET suite_info = '{"noun":"architecture","nouns":"causal-LM architectures","checks":{"forward":"logits against the CPU''s","generate":"greedy decoding gives the CPU''s tokens","backward":"loss and gradients of a few parameters","static_shapes":"a second forward at the same shapes compiles nothing new"},"native_checks":["forward","generate","backward"],"native_phrase":"pass forward, generate and backward natively","headlines":[{"name":"most_used","title":"most-used","subjects":["LlamaForCausalLM","Llama4ForCausalLM","MistralForCausalLM","MixtralForCausalLM","MinistralForCausalLM","Qwen2ForCausalLM","Qwen2MoeForCausalLM","Qwen3ForCausalLM","Qwen3MoeForCausalLM","GemmaForCausalLM","Gemma2ForCausalLM","Gemma3ForCausalLM","PhiForCausalLM","Phi3ForCausalLM","GPT2LMHeadModel","GPTNeoXForCausalLM","GPTJForCausalLM","GPTNeoForCausalLM","GPTBigCodeForCausalLM","FalconForCausalLM","OPTForCausalLM","BloomForCausalLM","Starcoder2ForCausalLM","OlmoForCausalLM","Olmo2ForCausalLM","GraniteForCausalLM","DeepseekV2ForCausalLM","DeepseekV3ForCausalLM","CohereForCausalLM","StableLmForCausalLM","CodeGenForCausalLM","MptForCausalLM","GlmForCausalLM","Glm4ForCausalLM","SmolLM3ForCausalLM","GptOssForCausalLM","Exaone4ForCausalLM"]}]}' WHERE suite = 'hf';
)sql",
    // v4: the outcome `flaky`. SQLite cannot alter a CHECK: the table is rebuilt (its 12-step
    // procedure; foreign keys are off while migrating, and checked before the commit).
    R"sql(
CREATE TABLE results_v4 (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass', 'flaky')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results_v4 SELECT run_id, case_id, outcome, duration, evidence, recorded_at FROM results;
DROP TABLE results;
ALTER TABLE results_v4 RENAME TO results;
CREATE INDEX results_by_case ON results(case_id);
)sql",
    // v5: the options the run gave its suite (the upstream suite's test folder), so a resumed
    // run and repro start its workers as the run did.
    R"sql(
ALTER TABLE runs ADD COLUMN suite_options TEXT NOT NULL DEFAULT '{}';
)sql",
    // v6: check-model's recorded verdicts (--record), a model's history across updates of the
    // model, the backend, torch and the harness (--history).
    R"sql(
CREATE TABLE model_checks (
  id INTEGER PRIMARY KEY,
  model_key TEXT NOT NULL,
  model_hash TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  backend_module TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  evidence_run TEXT NOT NULL REFERENCES runs(id),
  exit_code INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  result TEXT NOT NULL
);
CREATE INDEX model_checks_by_model ON model_checks(model_key, recorded_at);
)sql",
    // v7: the outcome `native_unknown` (matched; where its ops ran could not be observed).
    R"sql(
CREATE TABLE results_v7 (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass', 'flaky',
     'native_unknown')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results_v7 SELECT run_id, case_id, outcome, duration, evidence, recorded_at FROM results;
DROP TABLE results;
ALTER TABLE results_v7 RENAME TO results;
CREATE INDEX results_by_case ON results(case_id);
)sql",
    // v8: the outcomes `unverified` (ran; some values could not be compared: never a pass) and
    // `xfail_changed` (failed otherwise than its skip-list entry records).
    R"sql(
CREATE TABLE results_v8 (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass', 'flaky',
     'native_unknown', 'unverified', 'xfail_changed')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results_v8 SELECT run_id, case_id, outcome, duration, evidence, recorded_at FROM results;
DROP TABLE results;
ALTER TABLE results_v8 RENAME TO results;
CREATE INDEX results_by_case ON results(case_id);
)sql",
    // v9: host-only (matched; a kernel of the backend's own computed on the host), as an
    // outcome and as the route of an op event.
    R"sql(
CREATE TABLE results_v9 (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass', 'flaky',
     'native_unknown', 'unverified', 'xfail_changed', 'host_only')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results_v9 SELECT run_id, case_id, outcome, duration, evidence, recorded_at FROM results;
CREATE TABLE op_events_v9 (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  op TEXT NOT NULL,
  route TEXT NOT NULL CHECK (route IN ('native', 'fallback', 'host_only')),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id, op, route),
  FOREIGN KEY (run_id, case_id) REFERENCES results(run_id, case_id)
);
INSERT INTO op_events_v9 SELECT run_id, case_id, op, route, calls FROM op_events;
DROP TABLE op_events;
DROP TABLE results;
ALTER TABLE results_v9 RENAME TO results;
ALTER TABLE op_events_v9 RENAME TO op_events;
CREATE INDEX results_by_case ON results(case_id);
)sql",
};
constexpr int kLatest = static_cast<int>(std::size(kMigrations));
static_assert(kLatest == Store::kSchemaVersion);

}  // namespace

Store::Store(const std::string& path, bool create) : db_(path, create) {
  try {
    db_.exec("PRAGMA busy_timeout = 60000");
    schema_version();  // the first read: fails here on a file that is not a database
    enable_wal();
    db_.exec("PRAGMA synchronous = NORMAL");
    db_.exec("PRAGMA foreign_keys = ON");
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{} is not a usable results database: {}", path, e.what()));
  }
  migrate();
}

void Store::enable_wal() {
  // Switching a new file to WAL needs a moment alone with it, and SQLite answers "busy"
  // without consulting the busy timeout when another process is opening it too: retry.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    try {
      auto st = db_.prepare("PRAGMA journal_mode = WAL");
      st.step();
      if (st.text(0) == "wal") return;
    } catch (const StoreError& e) {
      if (std::string_view(e.what()).find("locked") == std::string_view::npos &&
          std::string_view(e.what()).find("busy") == std::string_view::npos) {
        throw;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw StoreError(
          fmt::format("{}: could not switch to WAL mode within 60 s (locked)", db_.path()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Store::schema_version() {
  auto st = db_.prepare("PRAGMA user_version");
  st.step();
  return static_cast<int>(st.integer(0));
}

void Store::migrate() {
  const int version = schema_version();
  if (version > kLatest) {
    throw StoreError(fmt::format(
        "{} has results schema version {}, newer than this harness understands ({}); use a "
        "newer neuron-conform",
        db_.path(), version, kLatest));
  }
  if (version == kLatest) return;
  // A migration may rebuild a table others reference; foreign keys can only be switched off
  // outside a transaction, and are checked before it commits.
  db_.exec("PRAGMA foreign_keys = OFF");
  const auto broken_references = [this] {
    auto st = db_.prepare("PRAGMA foreign_key_check");
    std::int64_t n = 0;
    while (st.step()) ++n;
    return n;
  };
  try {
    Transaction tx(db_);
    // Another process may have migrated while we waited for the write lock: read again.
    const int locked_version = schema_version();
    const std::int64_t broken_before = broken_references();
    for (int v = locked_version; v < kLatest; ++v) db_.exec(kMigrations[v]);
    db_.exec(fmt::format("PRAGMA user_version = {}", kLatest));
    if (broken_references() > broken_before)
      throw StoreError("the migration would break references between tables; nothing was changed");
    tx.commit();
  } catch (const StoreError& e) {
    db_.exec("PRAGMA foreign_keys = ON");
    throw StoreError(fmt::format("cannot write the results database {}: {}", db_.path(), e.what()));
  }
  db_.exec("PRAGMA foreign_keys = ON");
}

std::string Store::now_utc() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)),
                     static_cast<int>(ms.count()));
}

std::string Store::new_run_id() {
  std::random_device rd;
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y%m%d-%H%M%S}-{:04x}", fmt::gmtime(now), rd() & 0xffff);
}

void Store::insert_run(const RunInfo& r) {
  db_.prepare(
         "INSERT INTO runs (id, suite, status, started_at, ended_at, label, seed, host, "
         "torch_version, backend_module, backend_version, harness_version, device, shard, command, "
         "backend_info, suite_info, suite_options) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)")
      .bind(1, r.id)
      .bind(2, r.suite)
      .bind(3, r.status)
      .bind(4, r.started_at)
      .bind(5, r.ended_at)
      .bind(6, r.label)
      .bind(7, r.seed)
      .bind(8, r.host)
      .bind(9, r.torch_version)
      .bind(10, r.backend_module)
      .bind(11, r.backend_version)
      .bind(12, r.harness_version)
      .bind(13, r.device)
      .bind(14, r.shard)
      .bind(15, r.command)
      .bind(16, json_text(r.backend_info))
      .bind(17, json_text(r.suite_info))
      .bind(18, json_text(r.suite_options))
      .run();
}

void Store::create_run(const RunInfo& run) {
  Transaction tx(db_);
  insert_run(run);
  tx.commit();
}

void Store::import_run(const RunInfo& run, const std::vector<CaseId>& plan,
                       std::span<const CaseResult> results) {
  Transaction tx(db_);
  if (this->run(run.id))
    throw StoreError(fmt::format("run {} is in the DB already: it is not imported again", run.id));
  insert_run(run);
  insert_plan(run.id, plan);
  insert_results(run.id, results);
  tx.commit();
}

void Store::finish_run(const std::string& run_id) {
  const RunStatus status =
      unrecorded(run_id).empty() ? RunStatus::kComplete : RunStatus::kInterrupted;
  Transaction tx(db_);
  db_.prepare("UPDATE runs SET status = ?1, ended_at = ?2 WHERE id = ?3")
      .bind(1, name(status))
      .bind(2, now_utc())
      .bind(3, run_id)
      .run();
  forget_digest(run_id);
  tx.commit();
}

void Store::forget_digest(const std::string& run_id) {
  db_.prepare("DELETE FROM run_digests WHERE run_id = ?1").bind(1, run_id).run();
}

std::optional<RunInfo> Store::run(const std::string& id) {
  auto st = db_.prepare(
      "SELECT id, suite, status, started_at, ended_at, label, seed, host, torch_version, "
      "backend_module, backend_version, harness_version, device, shard, command, backend_info, "
      "suite_info, suite_options FROM runs WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  RunInfo r;
  r.id = st.text(0);
  r.suite = st.text(1);
  r.status = st.text(2);
  r.started_at = st.text(3);
  r.ended_at = st.optional_text(4);
  r.label = st.optional_text(5);
  r.seed = st.integer(6);
  r.host = st.text(7);
  r.torch_version = st.text(8);
  r.backend_module = st.text(9);
  r.backend_version = st.text(10);
  r.harness_version = st.text(11);
  r.device = st.text(12);
  r.shard = st.optional_text(13);
  r.command = st.text(14);
  r.backend_info = nlohmann::json::parse(st.text(15));
  r.suite_info = nlohmann::json::parse(st.text(16));
  r.suite_options = nlohmann::json::parse(st.text(17));
  return r;
}

std::vector<std::string> Store::run_ids(const std::optional<std::string>& suite) {
  auto st =
      db_.prepare("SELECT id FROM runs WHERE ?1 IS NULL OR suite = ?1 ORDER BY started_at, id");
  st.bind(1, suite);
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<std::string> Store::newest_run_of_each_suite() {
  // A window over each suite's runs, newest first (the order run_ids() uses, reversed).
  auto st = db_.prepare(
      "SELECT id FROM (SELECT id, suite, ROW_NUMBER() OVER (PARTITION BY suite ORDER BY "
      "started_at DESC, id DESC) AS n FROM runs) WHERE n = 1 ORDER BY suite");
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::optional<nlohmann::json> Store::digest(const std::string& run_id) {
  auto st = db_.prepare("SELECT digest FROM run_digests WHERE run_id = ?1");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return nlohmann::json::parse(st.text(0));
}

void Store::save_digest(const std::string& run_id, std::int64_t recorded,
                        const nlohmann::json& digest) {
  Transaction tx(db_);
  db_.prepare("INSERT OR REPLACE INTO run_digests (run_id, recorded, digest) VALUES (?1, ?2, ?3)")
      .bind(1, run_id)
      .bind(2, recorded)
      .bind(3, json_text(digest))
      .run();
  tx.commit();
}

std::string Store::resolve_run(const std::string& ref) {
  if (ref == "latest" || ref == "previous") {
    auto st =
        db_.prepare("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1 OFFSET ?1");
    st.bind(1, ref == "latest" ? 0 : 1);
    if (!st.step()) {
      throw StoreError(
          fmt::format("{} has no {} run", db_.path(),
                      ref == "latest" ? "runs: no 'latest'" : "second run: no 'previous'"));
    }
    return st.text(0);
  }
  if (!run(ref)) throw StoreError(fmt::format("no run '{}' in {}", ref, db_.path()));
  return ref;
}

void Store::record_plan(const std::string& run_id, const std::vector<CaseId>& cases) {
  Transaction tx(db_);
  insert_plan(run_id, cases);
  tx.commit();
}

void Store::insert_plan(const std::string& run_id, const std::vector<CaseId>& cases) {
  auto add_case = db_.prepare(
      "INSERT OR IGNORE INTO cases (id, suite, subject, dtype, check_name) VALUES (?1, ?2, ?3, ?4, "
      "?5)");
  auto add_plan =
      db_.prepare("INSERT INTO planned (run_id, case_id, position) VALUES (?1, ?2, ?3)");
  std::int64_t position = 0;
  for (const CaseId& c : cases) {
    const std::string id = c.str();
    add_case.bind(1, id)
        .bind(2, c.suite)
        .bind(3, c.subject)
        .bind(4, c.dtype)
        .bind(5, c.check)
        .run();
    add_plan.bind(1, run_id).bind(2, id).bind(3, position++).run();
  }
}

std::vector<std::string> Store::planned(const std::string& run_id) {
  std::vector<std::string> out;
  auto st = db_.prepare("SELECT case_id FROM planned WHERE run_id = ?1 ORDER BY position");
  st.bind(1, run_id);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<std::string> Store::unrecorded(const std::string& run_id) {
  std::vector<std::string> out;
  auto st = db_.prepare(
      "SELECT p.case_id FROM planned p LEFT JOIN results r ON r.run_id = p.run_id AND r.case_id = "
      "p.case_id "
      "WHERE p.run_id = ?1 AND r.case_id IS NULL ORDER BY p.position");
  st.bind(1, run_id);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

void Store::record_result(const std::string& run_id, const CaseResult& r) {
  record_results(run_id, std::span(&r, 1));
}

void Store::record_results(const std::string& run_id, std::span<const CaseResult> results) {
  Transaction tx(db_);
  insert_results(run_id, results);
  tx.commit();
}

void Store::insert_results(const std::string& run_id, std::span<const CaseResult> results) {
  auto result = db_.prepare(
      "INSERT INTO results (run_id, case_id, outcome, duration, evidence, recorded_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  auto events = insert_op_events();
  const std::string now = now_utc();
  for (const CaseResult& r : results) {
    result.bind(1, run_id)
        .bind(2, r.case_id)
        .bind(3, name(r.outcome))
        .bind(4, r.duration)
        .bind(5, json_text(r.evidence))
        .bind(6, now)
        .run();
    record_op_events(events, run_id, r);
  }
  forget_digest(run_id);  // what the dashboard cached of this run is out of date now
}

Statement Store::insert_op_events() {
  return db_.prepare(
      "INSERT INTO op_events (run_id, case_id, op, route, calls) VALUES (?1, ?2, ?3, ?4, ?5)");
}

void Store::record_op_events(Statement& insert, const std::string& run_id, const CaseResult& r) {
  for (const auto& route : kRoutes) {
    for (const auto& [op, calls] : r.ops(route.value)) {
      insert.bind(1, run_id).bind(2, r.case_id).bind(3, op).bind(4, route.name).bind(5, calls).run();
    }
  }
}

void Store::amend_result(const std::string& run_id, const CaseResult& r) {
  Transaction tx(db_);
  auto result = db_.prepare(
      "UPDATE results SET outcome = ?3, duration = ?4, evidence = ?5, recorded_at = ?6 "
      "WHERE run_id = ?1 AND case_id = ?2");
  result.bind(1, run_id)
      .bind(2, r.case_id)
      .bind(3, name(r.outcome))
      .bind(4, r.duration)
      .bind(5, json_text(r.evidence))
      .bind(6, now_utc())
      .run();
  if (db_.changes() != 1)
    throw std::invalid_argument(
        fmt::format("run {} has no result of {} to amend", run_id, r.case_id));
  bool has_ops = false;
  for (const auto& route : kRoutes) has_ops = has_ops || !r.ops(route.value).empty();
  if (has_ops) {
    db_.prepare("DELETE FROM op_events WHERE run_id = ?1 AND case_id = ?2")
        .bind(1, run_id)
        .bind(2, r.case_id)
        .run();
    auto events = insert_op_events();
    record_op_events(events, run_id, r);
  }
  forget_digest(run_id);
  tx.commit();
}

std::vector<CaseResult> Store::results(const std::string& run_id) {
  // Results and their op events from one snapshot: a run in progress may record a case between
  // the two reads.
  const Transaction snapshot(db_, Transaction::Access::kRead);
  std::vector<CaseResult> out;
  std::map<std::string, std::size_t> index;
  auto st = db_.prepare(
      "SELECT r.case_id, r.outcome, r.duration, r.evidence FROM results r "
      "LEFT JOIN planned p ON p.run_id = r.run_id AND p.case_id = r.case_id "
      "WHERE r.run_id = ?1 ORDER BY p.position, r.case_id");
  st.bind(1, run_id);
  while (st.step()) {
    index[st.text(0)] = out.size();
    out.push_back(CaseResult{st.text(0),
                             parse_outcome(st.text(1)),
                             st.real(2),
                             nlohmann::json::parse(st.text(3)),
                             {},
                             {},
                             {}});
  }
  auto events = db_.prepare("SELECT case_id, op, route, calls FROM op_events WHERE run_id = ?1");
  events.bind(1, run_id);
  while (events.step()) {
    CaseResult& r = out[index.at(events.text(0))];
    r.ops(parse_route(events.text(2)))[events.text(1)] = events.integer(3);
  }
  return out;
}

std::map<std::string, double> Store::last_durations() {
  std::map<std::string, double> out;
  // Per case the newest result (SQLite takes the bare column from the MAX row), read along
  // the case index instead of sorting the whole history.
  auto st = db_.prepare("SELECT case_id, duration, MAX(recorded_at) FROM results GROUP BY case_id");
  while (st.step()) out[st.text(0)] = st.real(1);
  return out;
}

OutcomeCounts Store::outcome_counts(const std::string& run_id) {
  OutcomeCounts out;
  auto st = db_.prepare("SELECT outcome, COUNT(*) FROM results WHERE run_id = ?1 GROUP BY outcome");
  st.bind(1, run_id);
  while (st.step()) out[parse_outcome(st.text(0))] = st.integer(1);
  return out;
}

std::int64_t Store::recorded_count(const std::string& run_id) {
  auto st = db_.prepare("SELECT COUNT(*) FROM results WHERE run_id = ?1");
  st.bind(1, run_id);
  st.step();
  return st.integer(0);
}

std::map<std::string, Reached> Store::reached_ops(const std::vector<std::string>& run_ids) {
  std::map<std::string, Reached> out;
  auto st = db_.prepare(
      "SELECT op, route, MIN(case_id), COUNT(DISTINCT case_id) FROM op_events WHERE run_id = ?1 "
      "GROUP BY op, route");
  for (const auto& id : run_ids) {
    st.bind(1, id);
    while (st.step()) {
      Reached& r = out[st.text(0)];
      const Route route = parse_route(st.text(1));
      auto& first = r.first(route);
      const std::string case_id = st.text(2);
      if (!first || case_id < *first) first = case_id;
      r.cases[static_cast<std::size_t>(route)] += st.integer(3);
    }
    st.reset();
  }
  return out;
}

std::int64_t Store::planned_count(const std::string& run_id) {
  auto st = db_.prepare("SELECT COUNT(*) FROM planned WHERE run_id = ?1");
  st.bind(1, run_id);
  st.step();
  return st.integer(0);
}

std::vector<std::pair<std::string, double>> Store::slowest(const std::string& run_id, int n) {
  std::vector<std::pair<std::string, double>> out;
  auto st = db_.prepare(
      "SELECT case_id, duration FROM results WHERE run_id = ?1 ORDER BY duration DESC LIMIT ?2");
  st.bind(1, run_id).bind(2, n);
  while (st.step()) out.emplace_back(st.text(0), st.real(1));
  return out;
}

std::vector<std::pair<std::string, nlohmann::json>> Store::worst_failures(const std::string& run_id,
                                                                          int n) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  auto st = db_.prepare(
      "SELECT case_id, evidence FROM results WHERE run_id = ?1 AND outcome = ?3 "
      "ORDER BY CASE WHEN json_type(evidence, '$.max_rel_error') = 'text' THEN 1e308 "
      "ELSE json_extract(evidence, '$.max_rel_error') END DESC, case_id LIMIT ?2");
  st.bind(1, run_id).bind(2, n).bind(3, name(Outcome::kFail));
  while (st.step()) out.emplace_back(st.text(0), nlohmann::json::parse(st.text(1), nullptr, false));
  return out;
}

}  // namespace conform

namespace conform {

std::map<std::string, std::vector<std::pair<std::string, Outcome>>> Store::outcomes_by_case(
    const std::vector<std::string>& run_ids) {
  std::map<std::string, std::vector<std::pair<std::string, Outcome>>> out;
  auto st = db_.prepare("SELECT case_id, outcome FROM results WHERE run_id = ?1");
  for (const auto& run_id : run_ids) {
    st.bind(1, run_id);
    while (st.step()) out[st.text(0)].emplace_back(run_id, parse_outcome(st.text(1)));
    st.reset();
  }
  return out;
}

std::optional<std::string> Store::latest_run_with(const std::string& case_id) {
  auto st = db_.prepare(
      "SELECT r.run_id FROM results r JOIN runs u ON u.id = r.run_id WHERE r.case_id = ?1 "
      "ORDER BY u.started_at DESC LIMIT 1");
  st.bind(1, case_id);
  if (st.step()) return st.text(0);
  return std::nullopt;
}

}  // namespace conform
