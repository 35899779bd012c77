#include "record/ModelHistory.h"

#include "common/Text.h"

#include <fmt/format.h>

#include <map>

namespace conform {

using nlohmann::json;

void record_model_check(Store& store, const ModelCheckRecord& r) {
  Database& db = store.db();
  Transaction tx(db);
  db.prepare(
        "INSERT INTO model_checks (model_key, model_hash, recorded_at, torch_version, "
        "backend_module, backend_version, harness_version, evidence_run, exit_code, verdict, "
        "result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
      .bind(1, r.model_key)
      .bind(2, r.model_hash)
      .bind(3, r.recorded_at)
      .bind(4, r.torch_version)
      .bind(5, r.backend_module)
      .bind(6, r.backend_version)
      .bind(7, r.harness_version)
      .bind(8, r.evidence_run)
      .bind(9, static_cast<std::int64_t>(r.exit_code))
      .bind(10, r.verdict)
      .bind(11, json_text(r.result))
      .run();
  tx.commit();
}

std::vector<ModelCheckRecord> model_checks(Store& store, const std::string& key_contains) {
  auto st = store.db().prepare(
      "SELECT model_key, model_hash, recorded_at, torch_version, backend_module, backend_version, "
      "harness_version, evidence_run, exit_code, verdict, result FROM model_checks WHERE "
      "instr(lower(model_key), lower(?1)) > 0 ORDER BY model_key, recorded_at, id");
  st.bind(1, key_contains);
  std::vector<ModelCheckRecord> out;
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5),
                   st.text(6), st.text(7), static_cast<int>(st.integer(8)), st.text(9),
                   json::parse(st.text(10), nullptr, false)});
  return out;
}

ModelCheckRecord model_check_record(const json& r, const std::string& recorded_at,
                                    const std::string& harness_version) {
  const json& m = r["model"];
  const json identity = m.value("identity", json::object());
  return {identity.value("key", std::string("unknown")),
          identity.value("hash", std::string()),
          recorded_at,
          m.value("torch", std::string("unknown")),
          m.value("backend_module", std::string("unknown")),
          m.value("backend_version", std::string("unknown")),
          harness_version,
          r["run"]["id"].get<std::string>(),
          r["exit_code"].get<int>(),
          r["verdict"].get<std::string>(),
          r};
}

namespace {

std::map<std::string, std::string> op_verdicts(const json& result) {
  std::map<std::string, std::string> out;
  for (const auto& o : result.value("ops", json::array()))
    out[o["op"].get<std::string>() + " " + o["dtype"].get<std::string>()] =
        o["verdict"].get<std::string>();
  return out;
}

}  // namespace

std::vector<std::string> model_check_changes(const ModelCheckRecord& before,
                                             const ModelCheckRecord& after) {
  std::vector<std::string> out;
  const auto changed = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(fmt::format("{} {} -> {}", what, a, b));
  };
  changed("model (hash)", before.model_hash, after.model_hash);
  changed("dtype", before.result["model"].value("dtype", ""),
          after.result["model"].value("dtype", ""));
  changed("train", before.result["model"].value("train", false) ? "yes" : "no",
          after.result["model"].value("train", false) ? "yes" : "no");
  changed("torch version", before.torch_version, after.torch_version);
  changed("backend", before.backend_module + " " + before.backend_version,
          after.backend_module + " " + after.backend_version);
  changed("harness version", before.harness_version, after.harness_version);
  changed("evidence run", before.evidence_run, after.evidence_run);
  changed("exit", std::to_string(before.exit_code), std::to_string(after.exit_code));
  const auto a = op_verdicts(before.result), b = op_verdicts(after.result);
  for (const auto& [op, verdict] : b) {
    const auto found = a.find(op);
    changed(op + ":", found == a.end() ? std::string("(not used)") : found->second, verdict);
  }
  for (const auto& [op, verdict] : a)
    if (!b.contains(op)) changed(op + ":", verdict, "(not used)");
  return out;
}

}  // namespace conform
