#include "runtime/Errors.h"

#include <c10/util/Exception.h>

namespace neuronsim {
namespace {

template <typename E>
[[noreturn]] void throw_prefixed(const E& error, const std::string& prefix) {
  throw E(prefix + error.what_without_backtrace(), nullptr, nullptr);
}

// throw_prefixed as the first of the kinds `error` is (each listed before its bases), else as a
// plain c10::Error.
template <typename... Kinds>
[[noreturn]] void throw_as_kind(const c10::Error& error, const std::string& prefix) {
  (..., [&] {
    if (const auto* kind = dynamic_cast<const Kinds*>(&error)) throw_prefixed(*kind, prefix);
  }());
  throw_prefixed(error, prefix);
}

}  // namespace

void rethrow_prefixed(const std::exception_ptr& error, const std::string& prefix) {
  try {
    std::rethrow_exception(error);
  } catch (const c10::Error& e) {
    throw_as_kind<c10::NotImplementedError, c10::IndexError, c10::ValueError, c10::TypeError,
                  c10::LinAlgError, c10::OutOfMemoryError>(e, prefix);
  } catch (const std::exception& e) {
    throw c10::Error(prefix + e.what(), nullptr, nullptr);
  }
}

}  // namespace neuronsim
