#pragma once

#include <exception>
#include <string>

namespace neuronsim {

// Rethrows `error` as the same kind of c10 error (Python sees the same exception type: IndexError
// stays IndexError), its message prefixed with `prefix`; an exception that is not a c10 error
// becomes a c10::Error.
[[noreturn]] void rethrow_prefixed(const std::exception_ptr& error, const std::string& prefix);

}  // namespace neuronsim
