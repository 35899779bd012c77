#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <string>

namespace neuronsim::engine {

// The two keys of one op call. The memory key (raw bytes of the operator's identity, the
// engine's modes and every argument; process-specific) finds a compiled plan in memory; the
// signature (readable, process-independent) is what a plan is compiled for and stored under
// on disk, built only on a memory miss.

// The memory key of a boxed call, written over `key` so that a caller reusing one buffer
// builds it without allocating.
void memory_key(const c10::OperatorHandle& op, const torch::jit::Stack& stack, std::string& key);

// The same key built from typed arguments (the engine's unboxed direct kernels): the bytes are
// those memory_key writes for the same call boxed, so both paths share one cache entry.
// Returns false for an argument the typed form does not cover (the caller goes boxed).
void begin_key(const c10::OperatorHandle& op, std::string& key);
void append_key(std::string& key, const at::Tensor& t);
void append_key(std::string& key, int64_t v);
void append_key(std::string& key, bool v);
bool append_key(std::string& key, const c10::Scalar& s);

// The readable signature a call compiles for, also the disk cache's key.
std::string signature(const c10::OperatorHandle& op, const torch::jit::Stack& stack);

// "aten::add.Tensor": an op's overload name, as tracking and messages use it.
std::string overload_name(const c10::OperatorHandle& op);

}  // namespace neuronsim::engine
