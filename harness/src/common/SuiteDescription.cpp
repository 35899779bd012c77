#include "common/SuiteDescription.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace conform {

using nlohmann::json;

namespace {

std::string text_field(const std::string& suite, const json& j, const char* field,
                       const std::string& fallback) {
  if (!j.contains(field)) return fallback;
  if (!j[field].is_string() || j[field].get<std::string>().empty())
    throw std::invalid_argument(
        fmt::format("suite '{}' declaration: '{}' must be a non-empty string", suite, field));
  return j[field].get<std::string>();
}

// The declared options: NAME -> {"type", "default", "help", "required"}, each checked.
std::vector<SuiteDescription::Option> parse_options(
    const json& j, const std::function<std::invalid_argument(const std::string&)>& fail) {
  static const std::set<std::string> kTypes = {"int", "float", "str", "bool", "path"};
  static const std::set<std::string> kFields = {"type", "default", "help", "required"};
  if (!j.is_object()) throw fail("'options' must map each option's name to its declaration");
  std::vector<SuiteDescription::Option> out;
  for (const auto& [name, spec] : j.items()) {
    const auto bad = [&](const std::string& what) {
      return fail(fmt::format("option '{}': {}", name, what));
    };
    if (!spec.is_object()) throw bad("must be an object with 'type' and 'help'");
    for (const auto& [key, _] : spec.items())
      if (!kFields.contains(key))
        throw bad(fmt::format("unknown field '{}' (known: type, default, help, required)", key));
    if (!spec.contains("type") || !spec["type"].is_string() ||
        !kTypes.contains(spec["type"].get<std::string>()))
      throw bad("'type' must be one of int, float, str, bool, path");
    if (!spec.contains("help") || !spec["help"].is_string() ||
        spec["help"].get<std::string>().empty())
      throw bad("'help' must say what the option does");
    SuiteDescription::Option option{name, spec["type"].get<std::string>(),
                                    spec.value("default", json()), spec["help"].get<std::string>()};
    if (spec.contains("required")) {
      if (!spec["required"].is_boolean()) throw bad("'required' must be true or false");
      option.required = spec["required"].get<bool>();
    }
    const json& d = option.default_value;
    const bool fits = d.is_null() || (option.type == "int" && d.is_number_integer()) ||
                      (option.type == "float" && d.is_number()) ||
                      (option.type == "bool" && d.is_boolean()) ||
                      ((option.type == "str" || option.type == "path") && d.is_string());
    if (!fits) throw bad(fmt::format("default {} is not a {}", d.dump(), option.type));
    out.push_back(std::move(option));
  }
  return out;
}

// false (not in the nightly), or {"shards": N, "options": {NAME: value}} naming declared options.
SuiteDescription::Nightly parse_nightly(
    const json& j, const std::vector<SuiteDescription::Option>& options,
    const std::function<std::invalid_argument(const std::string&)>& fail) {
  SuiteDescription::Nightly n;
  if (j.is_boolean()) {
    n.runs = j.get<bool>();
    return n;
  }
  if (!j.is_object())
    throw fail("'nightly' must be false or an object with 'shards' and 'options'");
  for (const auto& [key, _] : j.items())
    if (key != "shards" && key != "options")
      throw fail(fmt::format("'nightly': unknown field '{}' (known: shards, options)", key));
  if (j.contains("shards")) {
    if (!j["shards"].is_number_integer() || j["shards"].get<std::int64_t>() < 1 ||
        j["shards"].get<std::int64_t>() > 64)
      throw fail("'nightly': 'shards' must be an integer from 1 to 64");
    n.shards = j["shards"].get<int>();
  }
  if (j.contains("options")) {
    if (!j["options"].is_object())
      throw fail("'nightly': 'options' must map option names to values");
    for (const auto& [name, value] : j["options"].items()) {
      if (std::none_of(options.begin(), options.end(),
                       [&](const SuiteDescription::Option& o) { return o.name == name; }))
        throw fail(fmt::format("'nightly': option '{}' is not one the suite declares", name));
      if (!value.is_primitive() || value.is_null())
        throw fail(fmt::format("'nightly': option '{}' needs a number, text or true/false", name));
    }
    n.options = j["options"];
  }
  return n;
}

}  // namespace

SuiteDescription SuiteDescription::from_json(const std::string& suite, const json& j) {
  const auto fail = [&](const std::string& what) {
    return std::invalid_argument(fmt::format("suite '{}' declaration: {}", suite, what));
  };
  if (!j.is_object()) throw fail("must be an object");
  static const std::set<std::string> kKnown = {
      "noun",          "nouns",       "checks",  "native_checks", "headlines",
      "native_phrase", "share_cores", "options", "nightly",       "own_skiplist"};
  for (const auto& [key, _] : j.items())
    if (!kKnown.contains(key))
      throw fail(fmt::format(
          "unknown field '{}' (known: noun, nouns, checks, native_checks, native_phrase, "
          "headlines, share_cores, options, nightly, own_skiplist)",
          key));
  SuiteDescription d;
  d.suite = suite;
  d.noun = text_field(suite, j, "noun", d.noun);
  d.nouns = text_field(suite, j, "nouns", d.noun + "s");
  d.native_phrase = text_field(suite, j, "native_phrase", d.native_phrase);
  if (j.contains("share_cores")) {
    if (!j["share_cores"].is_boolean()) throw fail("'share_cores' must be true or false");
    d.share_cores = j["share_cores"].get<bool>();
  }
  if (j.contains("options")) d.options = parse_options(j["options"], fail);
  d.own_skiplist = text_field(suite, j, "own_skiplist", "");
  if (j.contains("nightly")) d.nightly = parse_nightly(j["nightly"], d.options, fail);
  if (!j.contains("checks") || !j["checks"].is_object() || j["checks"].empty())
    throw fail("'checks' must map each check's name to what it checks");
  for (const auto& [name, meaning] : j["checks"].items()) {
    if (!meaning.is_string()) throw fail(fmt::format("check '{}': its meaning must be text", name));
    d.checks.push_back({name, meaning.get<std::string>()});
  }
  if (j.contains("native_checks")) {
    if (!j["native_checks"].is_array() || j["native_checks"].empty())
      throw fail("'native_checks' must be a non-empty list of its checks");
    for (const auto& c : j["native_checks"]) {
      if (!c.is_string() || !d.has_check(c.get<std::string>()))
        throw fail(fmt::format("'native_checks' names {}, not one of its checks", c.dump()));
      d.native_checks.insert(c.get<std::string>());
    }
  } else {
    for (const auto& c : d.checks) d.native_checks.insert(c.name);
  }
  if (j.contains("headlines")) {
    if (!j["headlines"].is_array()) throw fail("'headlines' must be a list");
    for (const auto& h : j["headlines"]) {
      if (!h.is_object() || !h.contains("name") || !h.contains("title") ||
          !h.contains("subjects") || !h["name"].is_string() || !h["title"].is_string() ||
          !h["subjects"].is_array())
        throw fail("each headline needs 'name', 'title' and a list of 'subjects'");
      d.headlines.push_back({h["name"].get<std::string>(), h["title"].get<std::string>(),
                             h["subjects"].get<std::vector<std::string>>()});
    }
  }
  return d;
}

SuiteDescription SuiteDescription::undeclared(const std::string& suite,
                                              const std::set<std::string>& checks_seen) {
  SuiteDescription d;
  d.suite = suite;
  for (const auto& c : checks_seen) d.checks.push_back({c, ""});
  d.native_checks = checks_seen;
  return d;
}

SuiteDescription SuiteDescription::of_run(const std::string& suite, const json& stored,
                                          const std::set<std::string>& checks_seen) {
  if (stored.is_object() && !stored.empty()) return from_json(suite, stored);
  return undeclared(suite, checks_seen);
}

json SuiteDescription::to_json() const {
  json checks_json = json::object();
  for (const auto& c : checks) checks_json[c.name] = c.meaning;
  json headlines_json = json::array();
  for (const auto& h : headlines)
    headlines_json.push_back({{"name", h.name}, {"title", h.title}, {"subjects", h.subjects}});
  json out = {{"noun", noun},
              {"nouns", nouns},
              {"checks", checks_json},
              {"native_checks", native_checks},
              {"native_phrase", native_phrase},
              {"headlines", headlines_json}};
  if (share_cores) out["share_cores"] = true;  // how its workers ran, not what reports show
  if (!nightly.runs) {
    out["nightly"] = false;
  } else if (nightly.shards != 1 || !nightly.options.empty()) {
    out["nightly"] = {{"shards", nightly.shards}, {"options", nightly.options}};
  }
  if (!options.empty()) {
    json options_json = json::object();
    for (const auto& o : options) {
      json spec = {{"type", o.type}, {"help", o.help}};
      if (!o.default_value.is_null()) spec["default"] = o.default_value;
      if (o.required) spec["required"] = true;
      options_json[o.name] = spec;
    }
    out["options"] = options_json;
  }
  return out;
}

bool SuiteDescription::has_check(const std::string& check) const {
  return std::any_of(checks.begin(), checks.end(), [&](const Check& c) { return c.name == check; });
}

std::string SuiteDescription::native_sentence(std::int64_t n, std::int64_t m,
                                              const std::string& title) const {
  return fmt::format("{} of {} {}{} {}", n, m, title.empty() ? "" : title + " ", nouns,
                     native_phrase);
}

}  // namespace conform
