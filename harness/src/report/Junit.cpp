#include "common/Evidence.h"
#include "common/Result.h"
#include "report/Formats.h"

#include <fmt/format.h>
#include <pugixml.hpp>

#include <sstream>

namespace conform {

using nlohmann::json;

namespace {

std::string message_of(const json& c) {
  const json& e = c["evidence"];
  std::string text = Evidence::read(e).exception_type;
  if (const std::string message = case_message(e); !message.empty())
    text += (text.empty() ? "" : ": ") + message;
  if (e.contains("max_abs_error") && c["outcome"].get<Outcome>() == Outcome::kFail) {
    text = fmt::format("max abs error {}, max rel error {} (rtol {}, atol {}): {}",
                       e["max_abs_error"].dump(), e.value("max_rel_error", json()).dump(),
                       e.value("rtol", json()).dump(), e.value("atol", json()).dump(), text);
  }
  return text.empty() ? c["outcome"].get<std::string>() : text;
}

std::string skiplist_text(const json& c) {
  const json& s = c["evidence"].value("skiplist", json::object());
  return fmt::format("{} ({}): {} [{}]", c["outcome"].get<std::string>(), s.value("category", "?"),
                     s.value("reason", ""), s.value("entry", ""));
}

}  // namespace

std::string render_junit(const json& cov) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  const json& run = cov["run"];
  const json& counts = cov["headline"]["outcomes"];
  // JUnit's four counts from the outcomes' kinds: a mismatch or a stale expectation is a
  // failure, anything else that went wrong an error, skipped and expected failures skipped.
  std::int64_t failures = 0, errors = 0, skipped = 0;
  for (const auto& o : kOutcomes) {
    const std::int64_t n = counts[std::string(o.name)].get<std::int64_t>();
    if (o.value == Outcome::kFail || o.value == Outcome::kXpass)
      failures += n;
    else if (is_failure(o.value))
      errors += n;
    else if (o.value == Outcome::kSkip || o.value == Outcome::kXfail)
      skipped += n;
  }
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") =
      fmt::format("neuron-conform {}", run["id"].get<std::string>()).c_str();
  auto suite = suites.append_child("testsuite");
  suite.append_attribute("name") = run["suite"].get<std::string>().c_str();
  suite.append_attribute("tests") = static_cast<long long>(cov["cases"].size());
  suite.append_attribute("failures") = static_cast<long long>(failures);
  suite.append_attribute("errors") = static_cast<long long>(errors);
  suite.append_attribute("skipped") = static_cast<long long>(skipped);
  suite.append_attribute("timestamp") = run["started_at"].get<std::string>().c_str();
  suite.append_attribute("hostname") = run["host"].get<std::string>().c_str();
  double total = 0;
  auto props = suite.append_child("properties");
  for (const char* key :
       {"torch", "backend_module", "backend_version", "harness_version", "device"}) {
    auto p = props.append_child("property");
    p.append_attribute("name") = key;
    p.append_attribute("value") = run[key].get<std::string>().c_str();
  }
  for (const auto& c : cov["cases"]) {
    const std::string outcome = c["outcome"];
    const Outcome o = c["outcome"].get<Outcome>();
    const double seconds = c["duration"].get<double>();
    total += seconds;
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") =
        fmt::format("{}.{}", run["suite"].get<std::string>(), c["subject"].get<std::string>())
            .c_str();
    tc.append_attribute("name") =
        fmt::format("{}/{}", c["dtype"].get<std::string>(), c["check"].get<std::string>()).c_str();
    tc.append_attribute("time") = seconds;
    auto cprops = tc.append_child("properties");
    auto op = cprops.append_child("property");
    op.append_attribute("name") = "outcome";
    op.append_attribute("value") = outcome.c_str();
    for (const char* route : {"fallback_ops", "host_only_ops"}) {
      if (c.value(route, json::array()).empty()) continue;
      std::string ops;
      for (const auto& f : c[route]) ops += (ops.empty() ? "" : " ") + f.get<std::string>();
      auto fp = cprops.append_child("property");
      fp.append_attribute("name") = route;
      fp.append_attribute("value") = ops.c_str();
    }
    if (is_failure(o)) {
      // A mismatch is a JUnit failure; an exception, crash or timeout is an error.
      auto f = tc.append_child(o == Outcome::kFail ? "failure" : "error");
      const std::string message = message_of(c);
      f.append_attribute("type") = outcome.c_str();
      f.append_attribute("message") = message.substr(0, 300).c_str();
      f.text() = message.c_str();
    } else if (o == Outcome::kXpass) {
      auto f = tc.append_child("failure");
      f.append_attribute("type") = outcome.c_str();
      f.append_attribute("message") =
          ("passed although a skip list expects it to fail: " + skiplist_text(c)).c_str();
    } else if (o == Outcome::kFlaky) {
      // Surefire's convention: the test passed on a rerun; its first failure is kept.
      auto f = tc.append_child("flakyFailure");
      f.append_attribute("type") =
          c["evidence"].value("first_failure", json::object()).value("outcome", "").c_str();
      f.append_attribute("message") = case_message(c["evidence"]).substr(0, 300).c_str();
    } else if (!is_success(o)) {  // skip, xfail
      tc.append_child("skipped").append_attribute("message") = skiplist_text(c).c_str();
    }
    if (c.contains("repro"))
      tc.append_child("system-out").text() = c["repro"].get<std::string>().c_str();
  }
  suite.append_attribute("time") = total;
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

}  // namespace conform
