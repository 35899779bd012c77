#include "engine/Executable.h"

#include <c10/util/hash.h>
#include <torch/version.h>

#include <sstream>
#include <utility>

namespace neuronsim::engine {
namespace {

constexpr const char* kMagic = "NEURONSIM-NEFF";

// The plan's flags, in the order of its line: what serialize writes and parse reads.
constexpr std::pair<const char*, bool Executable::*> kFlags[] = {
    {"downcast_f64", &Executable::downcast_f64},
    {"wrap_i64", &Executable::wrap_i64},
    {"bf16_matmul", &Executable::bf16_matmul},
    {"f32_accumulation", &Executable::f32_accumulation},
    {"cpu_fallback", &Executable::cpu_fallback}};

std::string checksum(const std::string& body) {
  return c10::sha1(body).str();
}

// "fresh DTYPE SIZES STRIDES", "argument J" or "view J SIZES STRIDES OFFSET", lists as "2,3"
// ("-" when empty).
std::string ints(const std::vector<std::int64_t>& values) {
  if (values.empty()) return "-";
  std::string out;
  for (const auto v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

bool read_ints(const std::string& text, std::vector<std::int64_t>& out) {
  out.clear();
  if (text == "-") return true;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      out.push_back(std::stoll(item, &used));
      if (used != item.size()) return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return !out.empty();
}

std::string layout_line(const ResultLayout& r) {
  switch (r.kind) {
    case ResultLayout::Kind::kFresh:
      return "fresh " + std::to_string(static_cast<int>(r.dtype)) + ' ' + ints(r.sizes) + ' ' +
             ints(r.strides);
    case ResultLayout::Kind::kArgument:
      return "argument " + std::to_string(r.argument);
    case ResultLayout::Kind::kView:
      return "view " + std::to_string(r.argument) + ' ' + ints(r.sizes) + ' ' + ints(r.strides) +
             ' ' + std::to_string(r.offset);
  }
  return "?";
}

std::optional<ResultLayout> parse_layout(const std::string& line) {
  std::istringstream in(line);
  std::string kind, sizes, strides;
  ResultLayout r;
  int dtype = -1;
  if (!(in >> kind)) return std::nullopt;
  if (kind == "fresh" && in >> dtype >> sizes >> strides && read_ints(sizes, r.sizes) &&
      read_ints(strides, r.strides) && dtype >= 0 &&
      dtype < static_cast<int>(at::ScalarType::NumOptions)) {
    r.dtype = static_cast<at::ScalarType>(dtype);
    return r;
  }
  if (kind == "argument" && in >> r.argument && r.argument >= 0) {
    r.kind = ResultLayout::Kind::kArgument;
    return r;
  }
  if (kind == "view" && in >> r.argument >> sizes >> strides >> r.offset && r.argument >= 0 &&
      read_ints(sizes, r.sizes) && read_ints(strides, r.strides)) {
    r.kind = ResultLayout::Kind::kView;
    return r;
  }
  return std::nullopt;
}

std::string body_of(const Executable& e) {
  std::ostringstream out;
  out << kMagic << ' ' << Executable::kFormatVersion << '\n'
      << "torch " << TORCH_VERSION << '\n'
      << "op " << e.op << '\n'
      << "key " << e.key << '\n'
      << "plan";
  for (const auto& [name, flag] : kFlags) out << ' ' << name << '=' << e.*flag;
  out << '\n' << "ops " << e.ops << '\n';
  if (!e.results) {
    out << "results none\n";
  } else {
    out << "results " << e.results->size() << '\n';
    for (const ResultLayout& r : *e.results) out << "result " << layout_line(r) << '\n';
  }
  // The message as its byte count and then itself: it may hold any character, newlines too.
  if (e.refusal) {
    out << "refused " << e.refusal->kind << ' ' << e.refusal->message.size() << '\n'
        << e.refusal->message << '\n';
  }
  return out.str();
}

bool read_flag(const std::string& token, const std::string& name, bool& out) {
  if (token == name + "=0") return out = false, true;
  if (token == name + "=1") return out = true, true;
  return false;
}

}  // namespace

std::string Executable::serialize() const {
  const std::string body = body_of(*this);
  return body + "checksum " + checksum(body) + '\n';
}

std::optional<Executable> Executable::parse(const std::string& text, std::string& why) {
  const auto marker = text.rfind("checksum ");
  if (marker == std::string::npos) return why = "no checksum line", std::nullopt;
  const std::string body = text.substr(0, marker);
  std::string stored = text.substr(marker + 9);
  while (!stored.empty() && (stored.back() == '\n' || stored.back() == '\r')) stored.pop_back();
  if (stored != checksum(body)) return why = "checksum mismatch", std::nullopt;

  std::istringstream in(body);
  std::string line;
  Executable e;
  const std::string header = std::string(kMagic) + ' ' + std::to_string(kFormatVersion);
  if (!std::getline(in, line) || line != header)
    return why = "not a v" + std::to_string(kFormatVersion) + " entry", std::nullopt;
  if (!std::getline(in, line) || line != std::string("torch ") + TORCH_VERSION) {
    return why = "compiled for another torch (" + line + ")", std::nullopt;
  }
  if (!std::getline(in, line) || !line.starts_with("op ")) return why = "no op line", std::nullopt;
  e.op = line.substr(3);
  if (!std::getline(in, line) || !line.starts_with("key "))
    return why = "no key line", std::nullopt;
  e.key = line.substr(4);
  if (!std::getline(in, line) || !line.starts_with("plan "))
    return why = "no plan line", std::nullopt;
  std::istringstream plan(line.substr(5));
  for (const auto& [name, flag] : kFlags) {
    std::string token;
    if (!(plan >> token) || !read_flag(token, name, e.*flag))
      return why = "malformed plan", std::nullopt;
  }
  if (!std::getline(in, line) || !line.starts_with("ops ")) {
    return why = "no ops line", std::nullopt;
  }
  try {
    e.ops = std::stoi(line.substr(4));
  } catch (const std::exception&) {
    return why = "malformed ops line", std::nullopt;
  }
  if (!std::getline(in, line) || !line.starts_with("results "))
    return why = "no results line", std::nullopt;
  if (line != "results none") {
    std::size_t count = 0;
    try {
      count = std::stoul(line.substr(8));
    } catch (const std::exception&) {
      return why = "malformed results line", std::nullopt;
    }
    e.results.emplace();
    for (std::size_t i = 0; i < count; ++i) {
      std::optional<ResultLayout> layout;
      if (std::getline(in, line) && line.starts_with("result ")) {
        layout = parse_layout(line.substr(7));
      }
      if (!layout) return why = "malformed result line", std::nullopt;
      e.results->push_back(*layout);
    }
  }
  if (std::getline(in, line)) {
    std::istringstream refused(line);
    std::string word, kind;
    std::size_t bytes = 0;
    if (!(refused >> word >> kind >> bytes) || word != "refused") {
      return why = "malformed refusal line", std::nullopt;
    }
    std::string message(bytes, '\0');
    if (!in.read(message.data(), static_cast<std::streamsize>(bytes)) || in.get() != '\n') {
      return why = "truncated refusal message", std::nullopt;
    }
    e.refusal = Refusal{kind, std::move(message)};
    if (in.peek() != std::char_traits<char>::eof()) return why = "trailing data", std::nullopt;
  }
  return e;
}

}  // namespace neuronsim::engine
