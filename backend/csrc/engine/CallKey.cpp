#include "engine/CallKey.h"

#include "engine/Arguments.h"
#include "engine/Options.h"

#include <c10/util/bit_cast.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <sstream>

namespace neuronsim::engine {
namespace {

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

void append_tensor(std::string& out, const at::Tensor& t) {
  if (!t.defined()) {
    out += "undef";
    return;
  }
  out += c10::toString(t.scalar_type());
  // A wrapped number (a Python scalar made a tensor) promotes as a scalar, a 0-dim tensor does not.
  if (!on_device(t)) out += t.unsafeGetTensorImpl()->is_wrapped_number() ? "@scalar" : "@cpu";
  out += '[';
  for (auto s : t.sizes()) append_int(out, s), out += ',';
  out += "]{";
  for (auto s : t.strides()) append_int(out, s), out += ',';
  out += '}';
}

void append_double(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
  // A float never reads as an int: pow(t, 2.0) returns floats where pow(t, 2) keeps t's dtype,
  // so the two compile to different executables and must not share a signature.
  if (std::all_of(buf, end, [](char c) { return c == '-' || (c >= '0' && c <= '9'); })) out += ".0";
}

void append_value(std::string& out, const c10::IValue& v) {
  if (v.isDouble()) {
    append_double(out, v.toDouble());
  } else if (v.isTensor()) {
    append_tensor(out, v.toTensor());
  } else if (v.isNone()) {
    out += '-';
  } else if (v.isInt()) {
    append_int(out, v.toInt());
  } else if (v.isBool()) {
    out += v.toBool() ? "true" : "false";
  } else if (v.isGenerator()) {
    out += "gen";
  } else if (v.isTensorList() || v.isList()) {
    out += '(';
    for (const c10::IValue& item : v.toListRef()) append_value(out, item), out += ',';
    out += ')';
  } else {
    std::ostringstream text;
    text << v;
    for (char c : text.str()) out += c == '\n' ? ' ' : c;
  }
}

// A record's tag word: the kind of value and, for a tensor, its dtype and rank.
constexpr std::uint64_t tag(char kind, std::uint64_t detail = 0) {
  return static_cast<unsigned char>(kind) | detail << 8;
}

void append_double(MemoryKey& key, double v) {
  key.push(tag('d'));
  key.push(c10::bit_cast<std::uint64_t>(v));
}

void append_raw_value(MemoryKey& key, const c10::IValue& v) {
  if (v.isTensor()) {
    append_key(key, v.toTensor());
  } else if (v.isInt()) {
    append_key(key, v.toInt());
  } else if (v.isDouble()) {
    append_double(key, v.toDouble());
  } else if (v.isBool()) {
    append_key(key, v.toBool());
  } else if (v.isNone()) {
    key.push(tag('n'));
  } else if (v.isGenerator()) {
    key.push(tag('g'));
  } else if (v.isTensorList() || v.isList()) {
    key.push(tag('L', v.toListRef().size()));
    for (const c10::IValue& item : v.toListRef()) append_raw_value(key, item);
  } else {
    // Anything else (strings, devices, dtypes as text): its readable form, eight bytes a word.
    std::string text;
    append_value(text, v);
    key.push(tag('s', text.size()));
    for (std::size_t i = 0; i < text.size(); i += sizeof(std::uint64_t)) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, std::min(sizeof(word), text.size() - i));
      key.push(word);
    }
  }
}

}  // namespace

void begin_key(const c10::OperatorHandle& op, MemoryKey& key) {
  key.clear();
  key.push(reinterpret_cast<std::uintptr_t>(&op.schema()));
  key.push(static_cast<std::uint64_t>(wide64_mode()) |
           static_cast<std::uint64_t>(matmul_mode()) << 8);
}

void append_key(MemoryKey& key, const at::Tensor& t) {
  if (!t.defined()) {
    key.push(tag('u'));
    return;
  }
  const auto sizes = t.sizes();
  const std::uint64_t dtype_and_rank =
      static_cast<std::uint64_t>(t.scalar_type()) | static_cast<std::uint64_t>(sizes.size()) << 8;
  const bool wrapped = t.unsafeGetTensorImpl()->is_wrapped_number();
  key.push(tag(on_device(t) ? 'T' : wrapped ? 'W' : 'C', dtype_and_rank));
  key.push(sizes);
  key.push(t.strides());
}

void append_key(MemoryKey& key, int64_t v) {
  key.push(tag('i'));
  key.push(static_cast<std::uint64_t>(v));
}

void append_key(MemoryKey& key, bool v) {
  key.push(tag(v ? 'B' : 'b'));
}

bool append_key(MemoryKey& key, const c10::Scalar& s) {
  // As the dispatcher boxes a Scalar (IValue's constructor): double, bool or int.
  if (s.isFloatingPoint() && !s.isSymbolic()) {
    append_double(key, s.toDouble());
  } else if (s.isBoolean() && !s.isSymbolic()) {
    append_key(key, s.toBool());
  } else if (s.isIntegral(/*includeBool=*/false) && !s.isSymbolic() &&
             !(s.isUnsigned() && s.toUInt64() > std::numeric_limits<int64_t>::max())) {
    append_key(key, s.toLong());
  } else {
    return false;  // complex, symbolic, or an unsigned value an int64 cannot hold
  }
  return true;
}

void memory_key(const c10::OperatorHandle& op, const torch::jit::Stack& stack, MemoryKey& key) {
  const auto n = op.schema().arguments().size();
  begin_key(op, key);
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) append_raw_value(key, stack[i]);
}

std::string overload_name(const c10::OperatorHandle& op) {
  // c10::toString(OperatorName) goes through an ostringstream: too slow for every op call.
  const auto& name = op.operator_name();
  std::string text;
  text.reserve(name.name.size() + name.overload_name.size() + 1);
  text += name.name;
  if (!name.overload_name.empty()) text += '.', text += name.overload_name;
  return text;
}

std::string signature(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const auto n = op.schema().arguments().size();
  std::string key = overload_name(op);
  key.reserve(128);
  key += '|';
  key += to_string(wide64_mode());
  key += ',';
  key += to_string(matmul_mode());
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
    key += '|';
    append_value(key, stack[i]);
  }
  return key;
}

}  // namespace neuronsim::engine
