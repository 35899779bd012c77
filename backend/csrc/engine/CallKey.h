#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <string>

namespace neuronsim::engine {

// The two keys of one op call. The memory key (the operator's identity, the engine's modes and
// every argument, as raw machine words; process-specific) finds a compiled plan in memory; the
// signature (readable, process-independent) is what a plan is compiled for and stored under
// on disk, built only on a memory miss.

// Built on every op call: a record is a tag word and its payload (a tensor's sizes and strides
// copied as they are), so building one is a few stores into an inline buffer, and the key
// hashes itself as it grows (a multiply-rotate per word, FxHash: enough for tables that spread
// hashes themselves, as ska's flat map does with the golden ratio).
class MemoryKey {
 public:
  using Words = c10::SmallVector<std::uint64_t, 16>;  // a binary op on 2-d tensors fits
  void clear() {
    words_.clear();
    hash_ = 0;
  }
  void push(std::uint64_t word) {
    words_.push_back(word);
    mix(word);
  }
  void push(c10::IntArrayRef words) {
    words_.append(words.begin(), words.end());
    for (const int64_t word : words) mix(static_cast<std::uint64_t>(word));
  }
  const Words& words() const { return words_; }
  bool operator==(const MemoryKey& other) const {
    return hash_ == other.hash_ && words_ == other.words_;
  }
  struct Hash {
    std::size_t operator()(const MemoryKey& key) const noexcept { return key.hash_; }
  };

 private:
  void mix(std::uint64_t word) {
    hash_ = ((hash_ << 5 | hash_ >> 59) ^ word) * 0x517cc1b727220a95;
  }
  Words words_;
  std::uint64_t hash_ = 0;
};

// The memory key of a boxed call, written over `key` so that a caller reusing one buffer
// builds it without allocating.
void memory_key(const c10::OperatorHandle& op, const torch::jit::Stack& stack, MemoryKey& key);

// The same key built from typed arguments (the engine's unboxed direct kernels): the words are
// those memory_key writes for the same call boxed, so both paths share one cache entry.
// Returns false for an argument the typed form does not cover (the caller goes boxed).
void begin_key(const c10::OperatorHandle& op, MemoryKey& key);
void append_key(MemoryKey& key, const at::Tensor& t);
void append_key(MemoryKey& key, int64_t v);
void append_key(MemoryKey& key, bool v);
bool append_key(MemoryKey& key, const c10::Scalar& s);

// The readable signature a call compiles for, also the disk cache's key.
std::string signature(const c10::OperatorHandle& op, const torch::jit::Stack& stack);

// "aten::add.Tensor": an op's overload name, as tracking and messages use it.
std::string overload_name(const c10::OperatorHandle& op);

}  // namespace neuronsim::engine
