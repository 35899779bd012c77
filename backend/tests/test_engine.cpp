// The engine's pieces in C++: plan serialisation, the compile cache, signatures, tracking.
#include "engine/CompileCache.h"
#include "engine/Engine.h"
#include "engine/Executable.h"
#include "engine/Tracking.h"
#include "runtime/Config.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

using neuronsim::engine::CompileCache;
using neuronsim::engine::Executable;

namespace {
Executable sample_plan() {
  Executable e;
  e.key = "aten::add.Tensor|downcast,fp32|Double[2,]{1,}|Double[2,]{1,}|1";
  e.op = "aten::add.Tensor";
  e.downcast_f64 = true;
  e.wrap_i64 = true;
  return e;
}
}  // namespace

TEST(Executable, RoundTrips) {
  const Executable e = sample_plan();
  std::string why;
  const auto parsed = Executable::parse(e.serialize(), why);
  ASSERT_TRUE(parsed.has_value()) << why;
  EXPECT_EQ(parsed->key, e.key);
  EXPECT_EQ(parsed->op, e.op);
  EXPECT_TRUE(parsed->downcast_f64);
  EXPECT_TRUE(parsed->wrap_i64);
  EXPECT_FALSE(parsed->bf16_matmul);
}

TEST(Executable, RejectsDamage) {
  const std::string text = sample_plan().serialize();
  std::string why;
  EXPECT_FALSE(Executable::parse("", why));
  EXPECT_EQ(why, "no checksum line");
  std::string flipped = text;
  flipped[flipped.find("downcast_f64=1") + 13] = '0';
  EXPECT_FALSE(Executable::parse(flipped, why));
  EXPECT_EQ(why, "checksum mismatch");
  EXPECT_FALSE(Executable::parse(text.substr(0, text.size() / 2), why));
  std::string other_torch = text;
  other_torch.replace(other_torch.find("torch "), 8, "torch 9.");
  EXPECT_FALSE(Executable::parse(other_torch, why));  // checksum catches it first
}

TEST(CompileCache, CompilesOncePerKey) {
  auto& cache = CompileCache::instance();
  cache.reset_stats();
  int compiled = 0, signed_ = 0;
  auto signature = [&] {
    ++signed_;
    return std::string("test-key-compiles-once");
  };
  auto compile = [&](const std::string& key) {
    ++compiled;
    Executable e = sample_plan();
    e.key = key;
    return e;
  };
  auto a = cache.get_or_compile("memory-key-compiles-once", signature, compile);
  auto b = cache.get_or_compile("memory-key-compiles-once", signature, compile);
  EXPECT_EQ(signed_, 1);  // the readable signature is built on the miss only
  EXPECT_EQ(a.get(), b.get());
  const auto stats = cache.stats();
  EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  EXPECT_EQ(stats.memory_hits, 1);
  EXPECT_LE(compiled, 1);
}

TEST(CompileCache, FailedCompileCachesNothing) {
  auto& cache = CompileCache::instance();
  int attempts = 0;
  auto failing = [&](const std::string&) -> Executable {
    ++attempts;
    throw std::runtime_error("rejected");
  };
  auto signature = [] { return std::string("test-key-rejected"); };
  EXPECT_THROW(cache.get_or_compile("memory-key-rejected", signature, failing), std::runtime_error);
  EXPECT_THROW(cache.get_or_compile("memory-key-rejected", signature, failing), std::runtime_error);
  EXPECT_EQ(attempts, 2);
}

TEST(CompileCache, EntryPathIsVersionedAndStable) {
  const auto p = CompileCache::instance().entry_path("some key");
  EXPECT_EQ(p, CompileCache::instance().entry_path("some key"));
  EXPECT_NE(p, CompileCache::instance().entry_path("some other key"));
  EXPECT_EQ(p.parent_path().filename(), "v2");
  EXPECT_EQ(p.extension(), ".neff");
}

TEST(Signature, NamesOpDtypesShapesStridesAndArguments) {
  auto x = at::ones({2, 3}, at::TensorOptions().device(c10::Device("neuron:0")));
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  torch::jit::Stack stack{x, x.t().contiguous().t(), 2.5};
  const std::string key = neuronsim::engine::signature(op, stack);
  EXPECT_EQ(key.rfind("aten::add.Tensor|downcast,fp32|Float[2,3,]{3,1,}|Float[2,3,]{1,2,}|", 0), 0u)
      << key;
  EXPECT_NE(key.find("2.5"), std::string::npos) << key;
}

TEST(Tracking, CountsPerOverload) {
  neuronsim::engine::clear_op_tracking();
  auto x = at::ones({4}, at::TensorOptions().device(c10::Device("neuron:0")));
  auto y = x + x;
  (void)at::erfinv(y);
  EXPECT_EQ(neuronsim::engine::executed_ops().at("aten::add.Tensor"), 1);
  EXPECT_EQ(neuronsim::engine::executed_ops().count("aten::erfinv.out"), 0u);
  EXPECT_EQ(neuronsim::engine::fallback_ops().at("aten::erfinv.out"), 1);
}

TEST(MemoryKey, DistinguishesEverySignatureField) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  const auto opts = at::TensorOptions().device(c10::Device("neuron:0"));
  auto x = at::ones({2, 3}, opts);
  auto key = [&](const at::Tensor& a, double alpha) {
    torch::jit::Stack stack{a, a, alpha};
    std::string out = "left over from a previous call";  // overwritten, not appended to
    neuronsim::engine::memory_key(op, stack, out);
    return out;
  };
  const std::string base = key(x, 1.0);
  EXPECT_EQ(base, key(at::zeros({2, 3}, opts), 1.0));  // values do not matter
  EXPECT_NE(base, key(at::ones({3, 2}, opts), 1.0));   // shape
  EXPECT_NE(base, key(x.t().contiguous().t(), 1.0));   // strides
  EXPECT_NE(base, key(x.to(at::kBFloat16), 1.0));      // dtype
  EXPECT_NE(base, key(x, 2.0));                        // non-tensor argument
  EXPECT_NE(base, key(x.cpu(), 1.0));                  // device
}
