#include "engine/CallKey.h"

#include "engine/Arguments.h"
#include "engine/Options.h"

#include <charconv>
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
  if (!on_device(t)) out += "@cpu";
  out += '[';
  for (auto s : t.sizes()) append_int(out, s), out += ',';
  out += "]{";
  for (auto s : t.strides()) append_int(out, s), out += ',';
  out += '}';
}

void append_value(std::string& out, const c10::IValue& v) {
  if (v.isDouble()) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v.toDouble());
    out.append(buf, end);
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

template <typename T>
void append_raw(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void append_raw_double(std::string& out, double v) {
  out += 'd';
  append_raw(out, v);
}

void append_raw_value(std::string& out, const c10::IValue& v) {
  if (v.isTensor()) {
    append_key(out, v.toTensor());
  } else if (v.isInt()) {
    append_key(out, v.toInt());
  } else if (v.isDouble()) {
    append_raw_double(out, v.toDouble());
  } else if (v.isBool()) {
    append_key(out, v.toBool());
  } else if (v.isNone()) {
    out += 'n';
  } else if (v.isGenerator()) {
    out += 'g';
  } else if (v.isTensorList() || v.isList()) {
    out += 'L';
    append_raw(out, v.toListRef().size());
    for (const c10::IValue& item : v.toListRef()) append_raw_value(out, item);
  } else {
    out += 's';
    append_value(out, v);
    out += '\0';
  }
}

}  // namespace

void begin_key(const c10::OperatorHandle& op, std::string& key) {
  key.clear();
  append_raw(key, &op.schema());
  key += static_cast<char>(wide64_mode());
  key += static_cast<char>(matmul_mode());
}

void append_key(std::string& key, const at::Tensor& t) {
  if (!t.defined()) {
    key += 'u';
    return;
  }
  const char head[] = {on_device(t) ? 'T' : 'C', static_cast<char>(t.scalar_type()),
                       static_cast<char>(t.dim())};
  key.append(head, sizeof(head));
  // Sizes and strides in one append each: this runs for every tensor of every op call.
  const auto sizes = t.sizes(), strides = t.strides();
  key.append(reinterpret_cast<const char*>(sizes.data()), sizes.size() * sizeof(int64_t));
  key.append(reinterpret_cast<const char*>(strides.data()), strides.size() * sizeof(int64_t));
}

void append_key(std::string& key, int64_t v) {
  key += 'i';
  append_raw(key, v);
}

void append_key(std::string& key, bool v) {
  key += v ? 'B' : 'b';
}

bool append_key(std::string& key, const c10::Scalar& s) {
  // As the dispatcher boxes a Scalar (IValue's constructor): double, bool or int.
  if (s.isFloatingPoint() && !s.isSymbolic()) {
    append_raw_double(key, s.toDouble());
  } else if (s.isBoolean() && !s.isSymbolic()) {
    append_key(key, s.toBool());
  } else if (s.isIntegral(/*includeBool=*/false) && !s.isSymbolic()) {
    append_key(key, s.toLong());
  } else {
    return false;  // complex or symbolic
  }
  return true;
}

void memory_key(const c10::OperatorHandle& op, const torch::jit::Stack& stack, std::string& key) {
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
