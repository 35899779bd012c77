#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace neuronsim::engine {

// Where one result of a compiled op lives, known before the op runs (as a compiler knows its
// executable's outputs), so that the op can be queued and its results handed out at once.
struct ResultLayout {
  enum class Kind {
    kFresh,     // a new tensor of `dtype`, `sizes` and `strides`
    kArgument,  // the `argument`-th tensor of the call itself (in-place and out= results)
    kView,      // a view of the `argument`-th tensor: `sizes`, `strides`, `offset` past its own
  };
  Kind kind = Kind::kFresh;
  int argument = -1;  // counted over the call's tensors in argument order, lists flattened
  at::ScalarType dtype = at::kFloat;
  std::vector<std::int64_t> sizes, strides;
  std::int64_t offset = 0;
  bool operator==(const ResultLayout&) const = default;
};

// Why the compiler refused a signature (a dtype the device does not support): the kind of error
// it raised (c10's class name, "Error" for the base) and its message.
struct Refusal {
  std::string kind;
  std::string message;
  bool operator==(const Refusal&) const = default;
};

// What compiling one op for one signature produces: the kernel plan the engine runs (the
// emulator's counterpart of a NEFF). Plain data, so that it can be cached on disk.
struct Executable {
  // Bumped whenever the plan's meaning or the file format changes; old entries are ignored.
  // 6: a float scalar's signature never reads as an int (pow(t, 2.0) was served pow(t, 2)'s plan).
  // 7: a refused signature is an entry too (`refusal`).
  static constexpr int kFormatVersion = 7;

  std::string key;            // the full signature the plan was compiled for
  std::string op;             // overload name, e.g. "aten::add.Tensor"
  bool downcast_f64 = false;  // float64 tensors and dtype arguments computed as float32
  bool wrap_i64 = false;      // int64 values truncated to 32 bits at inputs and outputs
  bool bf16_matmul = false;   // float32 matmul inputs rounded to bfloat16
  // A bfloat16 or float16 matmul computed on float32 copies of its inputs and rounded once: the
  // products are exact in float32 and the sums accumulate in float32, as Trainium's PSUM does.
  bool f32_accumulation = false;
  bool cpu_fallback = false;  // not compilable (data-dependent output shape): run the fallback
  int ops = 1;                // ops in the executable: 1, or a fused chain's length
  // The results' layouts when the op can be queued; none when it runs at its call (its layouts
  // are unknown before it runs, it draws random numbers, or it resizes an out= argument).
  std::optional<std::vector<ResultLayout>> results;
  // Set when compiling refused the signature: the entry stands for the error, kept on disk as
  // Neuron's cache keeps failed compilations, so that a warm cache refuses it without compiling.
  std::optional<Refusal> refusal;

  // Text form stored in the disk cache; `parse` rejects anything that is not exactly a
  // serialised Executable of this format version and torch version, explaining why.
  std::string serialize() const;
  static std::optional<Executable> parse(const std::string& text, std::string& why);
};

}  // namespace neuronsim::engine
