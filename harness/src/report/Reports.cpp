#include "report/Reports.h"

#include "common/Environment.h"
#include "common/Files.h"
#include "report/Coverage.h"
#include "report/Formats.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace conform {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_template_file(const std::string& name) {
  const fs::path path = fs::path(data_root()) / "reports" / "templates" / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

PageTemplate page_template(const std::string& name) {
  return {name, read_template_file(name), read_template_file("common.js")};
}

json digest_of(const json& cov) {
  const json& h = cov["headline"];
  json categories = json::object();
  for (const auto& [category, counts] : cov["skips_by_category"].items()) {
    std::int64_t n = 0;
    for (const auto& [_, v] : counts.items()) n += v.get<std::int64_t>();
    categories[category] = n;
  }
  json subjects = json::object();
  for (const auto& s : cov["subjects"]) subjects[s["name"].get<std::string>()] = s["status"];
  const json& run = cov["run"];
  return {{"run",
           {{"id", run["id"]},
            {"suite", run["suite"]},
            {"noun", cov["suite"]["noun"]},
            {"status", run["status"]},
            {"started_at", run["started_at"]},
            {"label", run["label"]},
            {"duration_seconds", run["duration_seconds"]}}},
          {"planned", h["planned"]},
          {"outcomes", h["outcomes"]},
          {"categories", categories},
          {"declared_native_ops", h["declared_native_ops"]},
          {"declared_native_ops_exercised", h["declared_native_ops_exercised"]},
          {"aten_ops_seen", h["aten_ops_seen"]},
          {"aten_ops_with_fallback", h["aten_ops_with_fallback"]},
          {"compile_cache", h["compile_cache"]},
          {"compile_seconds", h.value("compile_seconds", json())},
          {"case_seconds", h.value("case_seconds", json())},
          {"subjects", subjects}};
}

json run_digest(Store& store, const std::string& run_id, const std::string& db_path) {
  if (auto saved = store.digest(run_id)) return *saved;
  const json cov = build_coverage(store, run_id, db_path);
  const json digest = digest_of(cov);
  store.save_digest(run_id, cov["headline"]["recorded"].get<std::int64_t>(), digest);
  return digest;
}

json write_reports(Store& store, const std::string& run_id, const std::string& db_path,
                   const std::string& out_dir) {
  json cov = build_coverage(store, run_id, db_path);
  write_reports(store, cov, db_path, out_dir);
  return cov;
}

std::string api_compat_dir(const std::string& db_path) {
  return (fs::absolute(db_path).parent_path() / "api-compat").string();
}

json api_compat_link(const std::string& db_path, const std::string& from_dir) {
  const fs::path table = fs::path(api_compat_dir(db_path)) / "torch_api_compatibility.md";
  if (!fs::exists(table)) return nullptr;
  return fs::relative(table, fs::absolute(from_dir)).string();
}

void write_reports(Store& store, const json& cov, const std::string& db_path,
                   const std::string& out_dir) {
  const fs::path dir(out_dir);
  fs::create_directories(dir);
  write_file(dir / "coverage.json", cov.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
  json page = cov;  // the page also links what lives beside the run (not part of coverage.json)
  page["links"] = {{"api_compat", api_compat_link(db_path, out_dir)}};
  write_file(dir / "index.html", fill_template(page_template("report.html"), page));
  write_file(dir / "summary.md", render_markdown(cov));
  write_file(dir / "junit.xml", render_junit(cov));
  write_file(dir / "ops.csv", render_csv(cov));
  store.save_digest(cov["run"]["id"], cov["headline"]["recorded"].get<std::int64_t>(),
                    digest_of(cov));
}

void point_latest(const std::string& db_path, const std::string& run_id) {
  const fs::path parent = fs::absolute(db_path).parent_path();
  const fs::path link = parent / "latest";
  const fs::path staged = parent / ".latest.partial";
  fs::remove(staged);
  fs::create_directory_symlink(fs::path("runs") / run_id, staged);
  fs::rename(staged, link);  // rename(2) replaces the old link atomically
}

}  // namespace conform
