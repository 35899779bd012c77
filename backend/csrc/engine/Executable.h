#pragma once

#include <optional>
#include <string>

namespace neuronsim::engine {

// What compiling one op for one signature produces: the kernel plan the engine runs (the
// emulator's counterpart of a NEFF). Plain data, so that it can be cached on disk.
struct Executable {
  // Bumped whenever the plan's meaning or the file format changes; old entries are ignored.
  static constexpr int kFormatVersion = 3;

  std::string key;            // the full signature the plan was compiled for
  std::string op;             // overload name, e.g. "aten::add.Tensor"
  bool downcast_f64 = false;  // float64 tensors and dtype arguments computed as float32
  bool wrap_i64 = false;      // int64 values truncated to 32 bits at inputs and outputs
  bool bf16_matmul = false;   // float32 matmul inputs rounded to bfloat16
  // A bfloat16 or float16 matmul computed on float32 copies of its inputs and rounded once: the
  // products are exact in float32 and the sums accumulate in float32, as Trainium's PSUM does.
  bool f32_accumulation = false;
  bool cpu_fallback = false;  // not compilable (data-dependent output shape): run the fallback

  // Text form stored in the disk cache; `parse` rejects anything that is not exactly a
  // serialised Executable of this format version and torch version, explaining why.
  std::string serialize() const;
  static std::optional<Executable> parse(const std::string& text, std::string& why);
};

}  // namespace neuronsim::engine
