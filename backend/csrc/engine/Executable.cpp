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

std::string body_of(const Executable& e) {
  std::ostringstream out;
  out << kMagic << ' ' << Executable::kFormatVersion << '\n'
      << "torch " << TORCH_VERSION << '\n'
      << "op " << e.op << '\n'
      << "key " << e.key << '\n'
      << "plan";
  for (const auto& [name, flag] : kFlags) out << ' ' << name << '=' << e.*flag;
  out << '\n';
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
  return e;
}

}  // namespace neuronsim::engine
