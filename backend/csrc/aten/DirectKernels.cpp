// Direct kernels: the engine's fast path for the hottest ops of the native set, unboxed.
//
// The boxed engine (engine/Engine.cpp) serves every native op: it builds an argument stack,
// binds CPU views of device memory, runs the CPU kernel through the dispatcher and adopts its
// results, about a microsecond per call above the kernel. For the ops below the emulator calls
// ATen's structured CPU kernel class itself over CPU views of the device tensors (device memory
// is host memory), with the output allocated in device memory by the kernel's set_output hook:
// no stack, no dispatch, no adoption; the plan comes from the same compile cache under the same
// key. A call the fast path does not cover goes to the boxed engine, which is the reference: a
// first call (it compiles), a plan that converts (64-bit dtypes, matmul inputs rounded to
// bfloat16 under NEURONSIM_MATMUL=bf16), a CPU tensor that is not a 0-dim scalar, and every call
// while ops are queued rather than run at their call (NEURONSIM_LAUNCH_BLOCKING=0): the boxed
// engine queues them.
#include "aten/DirectKernels.h"

#include "engine/CallKey.h"
#include "engine/CompileCache.h"
#include "engine/Engine.h"
#include "engine/Tracking.h"
#include "runtime/CpuView.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Executor.h"

#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>
#include <ATen/ops/_log_softmax_native.h>
#include <ATen/ops/_softmax_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/sub_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <tuple>
#include <type_traits>

namespace neuronsim {
namespace {

constexpr c10::DispatchKeySet kNeuronKeys(c10::DispatchKey::PrivateUse1);

// A structured CPU kernel whose output is allocated in device memory (what the code generator
// writes for a backend's functional variant, with the device's allocator); the kernel itself
// computes into a CPU view of it.
template <class CpuKernel>
struct OnDevice final : CpuKernel {
  explicit OnDevice(at::Tensor& output_slot) : output_slot(output_slot) {}
  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          c10::TensorOptions options) override {
    set_output_raw_strided(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              c10::TensorOptions options) override {
    const auto dtype = c10::typeMetaToScalarType(options.dtype());
    output = strides.empty()
                 ? at::detail::empty_generic(sizes, &DeviceAllocator::instance(), kNeuronKeys,
                                             dtype, options.memory_format_opt())
                 : at::detail::empty_strided_generic(sizes, strides, &DeviceAllocator::instance(),
                                                     kNeuronKeys, dtype);
    output_view = cpu_view_in(output_slot, output);
    // A TensorIterator kernel learns its output here; other structured kernels ask for it.
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, CpuKernel>) {
      CpuKernel::set_output_raw_strided(i, sizes, strides, options.device(c10::kCPU));
    }
  }
  const at::Tensor& maybe_get_output(int64_t) override { return output_view; }
  at::Tensor& output_slot;
  at::Tensor output;       // every kernel here has one output
  at::Tensor output_view;  // what the kernel writes
};

// What the fast path covers: tensors on the call's device, none 64-bit integer (the plan wraps
// those to 32 bits), or 0-dim CPU scalars (`x * 0.5`); everything else needs the boxed engine.
bool covered(const at::Tensor& first, const at::Tensor& t) {
  return t.defined() && (t.device() == first.device() ? t.scalar_type() != at::kLong
                                                      : t.is_cpu() && t.dim() == 0);
}
template <typename T>
bool covered(const at::Tensor&, const T&) {
  return true;
}

bool append(engine::MemoryKey& key, const c10::Scalar& s) {
  return engine::append_key(key, s);
}
template <typename T>
bool append(engine::MemoryKey& key, const T& v) {
  engine::append_key(key, v);
  return true;
}

// What one op's fast path reuses from call to call on a thread: its key's buffer and its CPU
// views (cpu_view_in) of self, of the other tensor operand and of the output.
struct Reused {
  engine::MemoryKey key;
  at::Tensor self, other, output;
};

// What the CPU kernel is given for an argument: a view of a device tensor (`self`'s own view
// again when it is `self`, as in x * x), anything else as is.
inline at::Tensor kernel_arg(const at::Tensor& t, const at::Tensor& self,
                             const at::Tensor& self_view, Reused& reused) {
  return t.unsafeGetTensorImpl() == self.unsafeGetTensorImpl() ? self_view
                                                                 : cpu_view_in(reused.other, t);
}
template <typename T>
const T& kernel_arg(const T& v, const at::Tensor&, const at::Tensor&, Reused&) {
  return v;
}

// An op with a direct kernel: its handle and its counter of native calls, looked up once.
struct DirectOp {
  DirectOp(const char* name, const char* overload)
      : handle(c10::Dispatcher::singleton().findSchemaOrThrow(name, overload)),
        calls(engine::native_counter(handle)) {}
  c10::OperatorHandle handle;
  std::atomic<std::int64_t>& calls;
};

// Runs `op` through `CpuKernel` when the compile cache has a plan for the call that runs the
// kernel as it is; through the boxed engine otherwise.
template <class CpuKernel, typename... Args>
at::Tensor run_direct(const DirectOp& op, const at::Tensor& self, const Args&... args) {
  static_assert((std::is_same_v<Args, at::Tensor> + ... + 0) <= 1, "one other operand's slot");
  thread_local Reused reused;
  engine::MemoryKey& key = reused.key;
  if (launch_blocking() && self.defined() && self.device().type() == kDeviceType &&
      self.scalar_type() != at::kLong && (covered(self, args) && ...)) {
    engine::begin_key(op.handle, key);
    if (append(key, self) && (append(key, args) && ...)) {
      const engine::Executable* plan = engine::CompileCache::instance().find_compiled(key);
      if (plan != nullptr && !plan->cpu_fallback && !plan->downcast_f64 && !plan->bf16_matmul &&
          !plan->f32_accumulation) {
        // the output is allocated on the current device: switch only when it is another
        std::optional<c10::DeviceGuard> guard;
        if (self.device().index() != current_device()) guard.emplace(self.device());
        OnDevice<CpuKernel> kernel(reused.output);
        const at::Tensor self_view = cpu_view_in(reused.self, self);
        std::apply(
            [&](const auto&... kernel_args) {
              kernel.meta(kernel_args...);
              kernel.impl(kernel_args..., kernel.output_view);
            },
            std::forward_as_tuple(self_view, kernel_arg(args, self, self_view, reused)...));
        op.calls.fetch_add(1, std::memory_order_relaxed);  // tracked as native
        return std::move(kernel.output);
      }
    }
  }
  torch::jit::Stack stack{self, args...};
  engine::run_native(op.handle, &stack);
  return std::move(stack.back()).toTensor();
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  static const DirectOp op("aten::add", "Tensor");
  return run_direct<at::native::structured_ufunc_add_CPU>(op, self, other, alpha);
}

at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  static const DirectOp op("aten::sub", "Tensor");
  return run_direct<at::native::structured_sub_out>(op, self, other, alpha);
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  static const DirectOp op("aten::mul", "Tensor");
  return run_direct<at::native::structured_mul_out>(op, self, other);
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  static const DirectOp op("aten::div", "Tensor");
  return run_direct<at::native::structured_div_out>(op, self, other);
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  static const DirectOp op("aten::mm", "");
  return run_direct<at::native::structured_mm_out_cpu>(op, self, mat2);
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  static const DirectOp op("aten::bmm", "");
  return run_direct<at::native::structured_bmm_out_cpu>(op, self, mat2);
}

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  static const DirectOp op("aten::_softmax", "");
  return run_direct<at::native::structured_softmax_cpu_out>(op, self, dim, half_to_float);
}

at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  static const DirectOp op("aten::_log_softmax", "");
  return run_direct<at::native::structured_log_softmax_cpu_out>(op, self, dim, half_to_float);
}

}  // namespace

const std::vector<std::string_view>& direct_kernel_ops() {
  static const std::vector<std::string_view> ops{"add.Tensor", "sub.Tensor",   "mul.Tensor",
                                                 "div.Tensor", "mm",           "bmm",
                                                 "_softmax",   "_log_softmax"};
  return ops;
}

bool has_direct_kernel(std::string_view overload) {
  const auto& ops = direct_kernel_ops();
  return std::find(ops.begin(), ops.end(), overload) != ops.end();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", add);
  m.impl("sub.Tensor", sub);
  m.impl("mul.Tensor", mul);
  m.impl("div.Tensor", div);
  m.impl("mm", mm);
  m.impl("bmm", bmm);
  m.impl("_softmax", softmax);
  m.impl("_log_softmax", log_softmax);
}

}  // namespace neuronsim
