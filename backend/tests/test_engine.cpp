// The engine's pieces in C++: plan serialisation, the compile cache, signatures, tracking.
#include "engine/CallKey.h"
#include "engine/Claim.h"
#include "engine/CompileCache.h"
#include "engine/Engine.h"
#include "engine/Executable.h"
#include "engine/Options.h"
#include "engine/Tracking.h"
#include "runtime/Config.h"
#include "runtime/CpuView.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Executor.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

using neuronsim::engine::CompileCache;
using neuronsim::engine::Executable;

namespace {
Executable sample_plan(
    std::string key = "aten::add.Tensor|downcast,fp32|Double[2,]{1,}|Double[2,]{1,}|1") {
  Executable e;
  e.key = std::move(key);
  e.op = "aten::add.Tensor";
  e.downcast_f64 = true;
  e.wrap_i64 = true;
  e.f32_accumulation = true;
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
  EXPECT_TRUE(parsed->f32_accumulation);
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

// A refusal is an entry too: its kind and a message of any characters come back as they were.
TEST(Executable, ARefusalRoundTrips) {
  Executable e = sample_plan();
  e.refusal = neuronsim::engine::Refusal{"NotImplementedError", "float64:\nrefused\nchecksum 0"};
  std::string why;
  const auto parsed = Executable::parse(e.serialize(), why);
  ASSERT_TRUE(parsed.has_value()) << why;
  ASSERT_TRUE(parsed->refusal.has_value());
  EXPECT_EQ(*parsed->refusal, *e.refusal);
  EXPECT_FALSE(Executable::parse(sample_plan().serialize(), why)->refusal.has_value());
}

namespace {
neuronsim::engine::MemoryKey test_key(int64_t id) {  // no op call's key starts with an int
  neuronsim::engine::MemoryKey key;
  neuronsim::engine::append_key(key, id);
  return key;
}
}  // namespace

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
    return sample_plan(key);
  };
  auto a = cache.get_or_compile(test_key(1), signature, compile);
  auto b = cache.get_or_compile(test_key(1), signature, compile);
  EXPECT_EQ(signed_, 1);  // the readable signature is built on the miss only
  EXPECT_EQ(a.get(), b.get());
  const auto stats = cache.stats();
  EXPECT_EQ(stats.compiles + stats.disk_hits, 1);
  EXPECT_EQ(stats.memory_hits, 1);
  EXPECT_LE(compiled, 1);
}

// As Neuron's cache keeps a failed compilation: the same signature raises the same error again,
// without compiling a second time; clear_memory() forgets the failure with the plans.
TEST(CompileCache, FailedCompileIsKeptAsAFailure) {
  auto& cache = CompileCache::instance();
  int attempts = 0;
  auto failing = [&](const std::string&) -> Executable {
    ++attempts;
    throw std::runtime_error("rejected");
  };
  auto signature = [] { return std::string("test-key-rejected"); };
  cache.reset_stats();
  EXPECT_THROW(cache.get_or_compile(test_key(2), signature, failing), std::runtime_error);
  try {
    cache.get_or_compile(test_key(2), signature, failing);
    FAIL() << "the cached failure was not raised";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rejected");
  }
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(cache.stats().failed_compiles, 1);
  EXPECT_EQ(cache.stats().failure_hits, 1);
  cache.clear_memory();
  EXPECT_THROW(cache.get_or_compile(test_key(2), signature, failing), std::runtime_error);
  EXPECT_EQ(attempts, 2);
}

// As Neuron's cache keeps failed compilations across processes: a signature refused with one of
// c10's errors is refused from disk by another process (here: this one, its memory forgotten)
// with the same kind of error and the same message, and is not compiled again.
TEST(CompileCache, ARefusalIsKeptOnDiskWithItsKind) {
  auto& cache = CompileCache::instance();
  const auto run = std::to_string(::getpid()) + "-" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::vector<std::function<void()>> raisers{
      [] { TORCH_CHECK_NOT_IMPLEMENTED(false, "float64:\nnot on this device"); },
      [] { throw c10::IndexError("index out of range"); },
      [] { throw c10::ValueError("bad value"); },
      [] { throw c10::TypeError("bad type"); },
      [] { throw c10::LinAlgError("singular"); },
      [] { TORCH_CHECK(false, "shapes disagree"); }};
  for (std::size_t i = 0; i < raisers.size(); ++i) {
    const std::string key = "test-key-refused-" + std::to_string(i) + "-" + run;
    auto signature = [&] { return key; };
    int attempts = 0;
    auto refusing = [&](const std::string&) -> Executable {
      ++attempts;
      raisers[i]();
      return {};
    };
    // What the compile raised, as (typeid name, message).
    auto raised = [&] {
      try {
        (void)cache.get_or_compile(test_key(100 + static_cast<int64_t>(i)), signature, refusing);
      } catch (const c10::Error& e) {
        return std::make_pair(std::string(typeid(e).name()),
                              std::string(e.what_without_backtrace()));
      }
      return std::make_pair(std::string("nothing"), std::string());
    };
    const auto first = raised();
    cache.clear_memory();
    cache.reset_stats();
    EXPECT_EQ(raised(), first) << i;
    EXPECT_EQ(attempts, 1) << i;
    const auto stats = cache.stats();
    EXPECT_EQ(stats.compiles, 0) << i;
    EXPECT_EQ(stats.disk_hits, 1) << i;
    EXPECT_EQ(stats.failure_hits, 1) << i;
    EXPECT_EQ(raised(), first) << i;  // then from memory
    EXPECT_EQ(cache.stats().disk_hits, 1) << i;
    std::filesystem::remove(cache.entry_path(key));
  }
}

// Hits are counted per thread (no shared counter on the hit path): the totals must still see
// every thread's, an exited thread's too, and a reset must start them from zero.
TEST(CompileCache, CountsHitsOfEveryThread) {
  auto& cache = CompileCache::instance();
  auto signature = [] { return std::string("test-key-counted-per-thread"); };
  auto compile = [](const std::string& key) { return sample_plan(key); };
  (void)cache.get_or_compile(test_key(3), signature, compile);
  cache.reset_stats();
  std::thread other([&] {
    for (int i = 0; i < 3; ++i) (void)cache.get_or_compile(test_key(3), signature, compile);
  });
  other.join();  // its first call hits the shared map, the next two its own
  (void)cache.find_compiled(test_key(3));
  EXPECT_EQ(cache.stats().memory_hits, 4);
  EXPECT_EQ(cache.stats().compiles + cache.stats().disk_hits, 0);
  cache.reset_stats();
  EXPECT_EQ(cache.stats().memory_hits, 0);
  (void)cache.find_compiled(test_key(3));
  EXPECT_EQ(cache.stats().memory_hits, 1);
}

TEST(CompileCache, EntryPathIsVersionedAndStable) {
  const auto p = CompileCache::instance().entry_path("some key");
  EXPECT_EQ(p, CompileCache::instance().entry_path("some key"));
  EXPECT_NE(p, CompileCache::instance().entry_path("some other key"));
  EXPECT_EQ(p.parent_path().filename(), "v" + std::to_string(Executable::kFormatVersion));
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

// pow(t, 2) keeps t's dtype and pow(t, 2.0) promotes it: scalars that compare equal but differ in
// kind (int, float, bool) are different signatures, in any spelling of the float.
TEST(Signature, ScalarsEqualInValueButNotInKindDiffer) {
  auto x = at::ones({3}, at::TensorOptions().device(c10::Device("neuron:0")).dtype(at::kLong));
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::pow", "Tensor_Scalar");
  auto signed_with = [&](c10::IValue exponent) {
    torch::jit::Stack stack{x, std::move(exponent)};
    return neuronsim::engine::signature(op, stack);
  };
  const std::vector<std::vector<c10::IValue>> equal_values = {{int64_t{2}, 2.0},
                                                              {int64_t{1}, 1.0, true},
                                                              {int64_t{0}, 0.0, -0.0, false},
                                                              {int64_t{-3}, -3.0},
                                                              {int64_t{100000000000000000}, 1e17}};
  for (const auto& group : equal_values) {
    std::set<std::string> seen;
    for (const auto& value : group) seen.insert(signed_with(value));
    EXPECT_EQ(seen.size(), group.size()) << signed_with(group.front());
  }
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
    neuronsim::engine::MemoryKey out;
    neuronsim::engine::append_key(out, int64_t{7});  // left over: overwritten, not appended to
    neuronsim::engine::memory_key(op, stack, out);
    return out;
  };
  const neuronsim::engine::MemoryKey base = key(x, 1.0);
  EXPECT_EQ(base, key(at::zeros({2, 3}, opts), 1.0));  // values do not matter
  EXPECT_NE(base, key(at::ones({3, 2}, opts), 1.0));   // shape
  EXPECT_NE(base, key(x.t().contiguous().t(), 1.0));   // strides
  EXPECT_NE(base, key(x.to(at::kBFloat16), 1.0));      // dtype
  EXPECT_NE(base, key(x, 2.0));                        // non-tensor argument
  EXPECT_NE(base, key(x.cpu(), 1.0));                  // device
}

namespace {
bool allocated_by_device(const at::Tensor& t) {  // not a CPU kernel's buffer, adopted
  return neuronsim::DeviceAllocator::is_allocated_block(t.storage().data_ptr());
}
}  // namespace

// The direct kernels build the memory key from typed arguments: the bytes must be the boxed
// engine's for the same call, or the two paths would compile the same signature twice.
TEST(DirectKernels, TypedKeyIsTheBoxedKey) {
  namespace engine = neuronsim::engine;
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  auto x = at::ones({2, 3}, at::TensorOptions().device(c10::Device("neuron:0")));
  const at::Tensor scalar = at::scalar_tensor(2.0);  // a CPU 0-dim operand, as `x * 0.5` passes
  for (const c10::Scalar& alpha : {c10::Scalar(1), c10::Scalar(2.5), c10::Scalar(true)}) {
    for (const at::Tensor& other : {x, x.t().contiguous().t(), scalar}) {
      engine::MemoryKey boxed, typed;
      engine::append_key(typed, int64_t{7});  // left over: overwritten, not appended to
      engine::memory_key(op, torch::jit::Stack{x, other, alpha}, boxed);
      engine::begin_key(op, typed);
      engine::append_key(typed, x);
      engine::append_key(typed, other);
      ASSERT_TRUE(engine::append_key(typed, alpha));
      EXPECT_EQ(typed.words(), boxed.words()) << "alpha " << alpha;
    }
  }
  engine::MemoryKey key;
  EXPECT_FALSE(engine::append_key(key, c10::Scalar(c10::complex<double>(1, 2))));
  // alpha=2**63 from Python: an unsigned Scalar no int64 holds goes boxed, not to an exception
  EXPECT_FALSE(engine::append_key(key, c10::Scalar(std::uint64_t{1} << 63)));
}

// A first call compiles through the boxed engine; later ones run directly: one compile, every
// call tracked as native, the result in device memory of its own and equal to the CPU's bits.
TEST(DirectKernels, CompileOnceThenRunDirectly) {
  namespace engine = neuronsim::engine;
  // The direct kernels are the path of ops run at their call.
  neuronsim::set_launch_blocking(true);
  const std::shared_ptr<void> restore(nullptr,
                                      [](void*) { neuronsim::set_launch_blocking(false); });
  auto& cache = CompileCache::instance();
  const auto opts = at::TensorOptions().device(c10::Device("neuron:0"));
  const at::Tensor a = at::randn({5, 13}), b = at::randn({13});  // shapes no other test uses
  const at::Tensor da = a.to(opts), db = b.to(opts);
  using Binary = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;
  const std::vector<std::pair<const char*, Binary>> ops{
      {"aten::add.Tensor", [](auto& x, auto& y) { return at::add(x, y, 2); }},
      {"aten::sub.Tensor", [](auto& x, auto& y) { return at::sub(x, y); }},
      {"aten::mul.Tensor", [](auto& x, auto& y) { return at::mul(x, y); }},
      {"aten::mul.Tensor", [](auto& x, auto&) { return at::mul(x, x); }},  // one view for both
      {"aten::div.Tensor", [](auto& x, auto& y) { return at::div(x, y); }},
      {"aten::mm", [](auto& x, auto&) { return at::mm(x, x.t()); }},
      {"aten::bmm", [](auto& x, auto&) { return at::bmm(x.unsqueeze(0), x.t().unsqueeze(0)); }},
      {"aten::_softmax", [](auto& x, auto&) { return at::_softmax(x, 1, false); }},
      {"aten::_log_softmax", [](auto& x, auto&) { return at::_log_softmax(x, 0, false); }}};
  for (const auto& [name, fn] : ops) {
    cache.reset_stats();
    engine::clear_op_tracking();
    const at::Tensor expected = fn(a, b);
    for (int call = 0; call < 3; ++call) {
      const at::Tensor got = fn(da, db);
      EXPECT_TRUE(got.device().is_privateuseone()) << name;
      EXPECT_TRUE(at::equal(got.cpu(), expected)) << name << " call " << call;
      EXPECT_EQ(allocated_by_device(got), call > 0) << name << " call " << call;
    }
    const auto stats = cache.stats();
    EXPECT_EQ(stats.compiles + stats.disk_hits, 1) << name;
    EXPECT_EQ(engine::executed_ops().at(name), 3) << name;
  }
}

// What the direct path does not cover goes to the boxed engine with the same result: int64
// (wrapped to 32 bits), float64 (computed in float32 by default), a CPU scalar, mixed dtypes,
// non-contiguous inputs.
TEST(DirectKernels, UncoveredCallsGetTheEnginesAnswer) {
  const auto opts = at::TensorOptions().device(c10::Device("neuron:0"));
  const at::Tensor big = at::full({3}, int64_t{1} << 40, at::kLong);
  for (int call = 0; call < 2; ++call) {
    const at::Tensor wrapped = at::add(big.to(opts), big.to(opts)).cpu();
    EXPECT_EQ(wrapped[0].item<int64_t>(), 0) << "2^41 wraps to 0 in 32 bits";
    const at::Tensor third = at::full({3}, 1.0 / 3, at::kDouble);
    const at::Tensor squared = at::mul(third.to(opts), third.to(opts)).cpu();
    EXPECT_EQ(squared.scalar_type(), at::kDouble);
    const at::Tensor in_float32 = third.to(at::kFloat);
    EXPECT_TRUE(at::equal(squared, at::mul(in_float32, in_float32).to(at::kDouble)));
    EXPECT_FALSE(at::equal(squared, at::mul(third, third)));
  }
  const at::Tensor x = at::randn({4, 6}), y = at::randn({6, 4}).to(at::kBFloat16);
  for (int call = 0; call < 2; ++call) {
    EXPECT_TRUE(at::equal(at::mul(x.to(at::kBFloat16).to(opts), 0.5).cpu(),
                          at::mul(x.to(at::kBFloat16), 0.5)));
    EXPECT_TRUE(at::equal(at::add(x.to(opts), y.to(opts).t()).cpu(), at::add(x, y.t())));
    EXPECT_TRUE(
        at::equal(at::_softmax(x.to(opts).t(), 1, false).cpu(), at::_softmax(x.t(), 1, false)));
  }
  // NEURONSIM_MATMUL=bf16: float32 matmul inputs rounded to bfloat16 by the plan, every call
  neuronsim::engine::set_matmul_mode(neuronsim::MatmulMode::kBf16);
  const at::Tensor rounded = x.to(at::kBFloat16).to(at::kFloat);
  for (int call = 0; call < 2; ++call) {
    EXPECT_TRUE(at::equal(at::mm(x.to(opts), x.t().to(opts)).cpu(), at::mm(rounded, rounded.t())));
  }
  neuronsim::engine::set_matmul_mode(neuronsim::MatmulMode::kFp32);
}

// A direct call on another device than the current one allocates its result there, in that
// device's memory statistics, and leaves the current device as it was.
TEST(DirectKernels, ResultOnTheOperandsDevice) {
  const auto n1 = at::TensorOptions().device(c10::Device("neuron:1"));
  const at::Tensor x = at::randn({3, 17}).to(n1);
  ASSERT_EQ(neuronsim::current_device(), 0);
  auto allocations = [] {
    return neuronsim::DeviceAllocator::instance().getDeviceStats(1).allocation[0].current;
  };
  for (int call = 0; call < 2; ++call) {
    const auto before = allocations();
    const at::Tensor y = at::mul(x, x);
    EXPECT_EQ(y.device(), c10::Device("neuron:1")) << "call " << call;
    EXPECT_EQ(allocations(), before + 1);
    EXPECT_EQ(neuronsim::current_device(), 0);
  }
}

// The direct kernels rebuild CPU views in per-thread slots. A slot must never hand out a view
// someone still holds (a nested call gets a new one), never keep a caller's CPU tensor, and
// must describe exactly the tensor it was last given.
TEST(CpuView, SlotIsReusedOnlyWhenFree) {
  const auto opts = at::TensorOptions().device(c10::Device("neuron:0"));
  auto a = at::arange(6, opts.dtype(at::kFloat)).reshape({2, 3});
  auto b = at::arange(12, opts.dtype(at::kFloat)).reshape({4, 3}).t();
  at::Tensor slot;
  const c10::TensorImpl* first = nullptr;
  {
    const at::Tensor view = neuronsim::cpu_view_in(slot, a);
    first = view.unsafeGetTensorImpl();
    EXPECT_TRUE(view.is_cpu());
    EXPECT_TRUE(at::equal(view, a.cpu()));
    // held: the next view must be a new one, and this one must stay as it is
    const at::Tensor nested = neuronsim::cpu_view_in(slot, b);
    EXPECT_NE(nested.unsafeGetTensorImpl(), first);
    EXPECT_TRUE(at::equal(view, a.cpu()));
    EXPECT_TRUE(at::equal(nested, b.cpu()));
  }
  const c10::TensorImpl* reused = nullptr;
  {
    const at::Tensor again = neuronsim::cpu_view_in(slot, a.narrow(1, 1, 2));
    EXPECT_EQ(again.sizes(), c10::IntArrayRef({2, 2}));
    EXPECT_TRUE(at::equal(again, a.narrow(1, 1, 2).cpu()));
    reused = again.unsafeGetTensorImpl();
  }
  EXPECT_EQ(neuronsim::cpu_view_in(slot, b).unsafeGetTensorImpl(), reused);  // free again: reused
  EXPECT_TRUE(at::equal(slot, b.cpu()));  // strides of the transposed tensor taken over
  EXPECT_NE(neuronsim::cpu_view_in(slot, a.to(at::kDouble)).unsafeGetTensorImpl(), reused);

  {
    // Built under InferenceMode, a view is an inference tensor: never handed out after it.
    c10::InferenceMode guard;
    EXPECT_TRUE(neuronsim::cpu_view_in(slot, a).is_inference());
  }
  EXPECT_FALSE(neuronsim::cpu_view_in(slot, a).is_inference());

  const at::Tensor host = at::ones({2});
  EXPECT_TRUE(neuronsim::cpu_view_in(slot, host).is_same(host));
  EXPECT_FALSE(slot.is_same(host));  // a caller's CPU tensor is never kept
}

TEST(Claim, AnUnnamedClaimIsBrokenWithoutWaitingForItsExpiry) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("neuronsim-claim-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path entry = dir / "entry.neff";
  {
    std::ofstream unnamed(entry.string() + ".claim");  // made, never named: its maker was killed
  }
  fs::last_write_time(entry.string() + ".claim",
                      fs::file_time_type::clock::now() - std::chrono::seconds(5));
  std::optional<fs::path> held;
  neuronsim::engine::ClaimEvents events;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(neuronsim::engine::claim_entry(entry, std::chrono::hours(1), held, events));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_TRUE(events.waited && events.broken);
  ASSERT_TRUE(held.has_value());
  neuronsim::engine::release_claim(held);
  EXPECT_FALSE(fs::exists(entry.string() + ".claim"));
  fs::remove_all(dir);
}
