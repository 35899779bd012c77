#include "engine/Engine.h"

#include "engine/Arguments.h"
#include "engine/CallKey.h"
#include "engine/CompileCache.h"
#include "engine/DeviceCheck.h"
#include "engine/Fallback.h"
#include "engine/Fusion.h"
#include "engine/Options.h"
#include "engine/ResultLayouts.h"
#include "engine/Rules.h"
#include "engine/Tracking.h"
#include "runtime/CpuView.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Executor.h"
#include "runtime/Generator.h"
#include "runtime/Stream.h"

#include <ATen/MemoryOverlap.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <unordered_set>

namespace neuronsim::engine {
namespace {

bool is_matmul(const c10::OperatorName& name) {
  static const std::unordered_set<std::string> kMatmuls{
      "aten::mm",     "aten::bmm",   "aten::addmm", "aten::baddbmm",
      "aten::addbmm", "aten::addmv", "aten::mv",    "aten::dot"};
  return kMatmuls.contains(name.name);
}

// The matmuls whose CPU kernels sum a 16-bit product in float32 and round once; addbmm's rounds
// each batch's partial sum to 16 bits, so it runs as it is, to round alike.
bool rounds_once(const c10::OperatorName& name) {
  return is_matmul(name) && name.name != "aten::addbmm";
}

// The one 16-bit floating dtype of every tensor argument, all on the device; nullopt otherwise
// (mixed dtypes or a CPU operand: the kernel sees them as they are, and decides).
std::optional<at::ScalarType> reduced_precision_dtype(c10::ArrayRef<c10::IValue> args) {
  std::optional<at::ScalarType> dtype;
  bool uniform = true;
  for (const c10::IValue& arg : args) {
    for_each_tensor(arg, [&](const at::Tensor& t) {
      const auto type = t.scalar_type();
      const bool half = type == at::kBFloat16 || type == at::kHalf;
      if (!on_device(t) || !half || (dtype && *dtype != type)) uniform = false;
      dtype = type;
    });
  }
  return uniform ? dtype : std::nullopt;
}

bool is_mutable(const c10::Argument& arg) {
  return arg.alias_info() != nullptr && arg.alias_info()->isWrite();
}

// Arguments a kernel writes although the schema does not mark them: batch norm's running
// statistics (running_mean, running_var). A converted (downcast) copy must be written back too.
bool written_unannotated(const c10::FunctionSchema& schema, std::size_t i) {
  static const c10::FunctionSchema* const batch_norm =
      &c10::Dispatcher::singleton().findSchemaOrThrow("aten::native_batch_norm", "").schema();
  return (i == 3 || i == 4) && &schema == batch_norm;
}

// Compiling: validate the signature's dtypes against Trainium's rules and choose the plan.
Executable lower(const c10::OperatorHandle& op, const std::string& key,
                 c10::ArrayRef<c10::IValue> args) {
  const std::string op_name = overload_name(op);
  Executable plan;
  plan.key = key;
  plan.op = op_name;
  if (has_data_dependent_shape(op, args)) {
    plan.cpu_fallback = true;  // no static shape to compile for
    return plan;
  }
  check_no_complex(op_name, args);
  bool has_f64 = false, has_i64 = false, all_f32 = true;
  std::string dtypes;
  for (std::size_t i = 0; i < args.size(); ++i) {
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      if (!on_device(t)) return;
      const auto dtype = t.scalar_type();
      has_f64 |= dtype == at::kDouble;
      has_i64 |= dtype == at::kLong;
      all_f32 &= dtype == at::kFloat;
    });
    const auto& type = op.schema().arguments()[i].real_type();
    if (args[i].isInt() && type->kind() == c10::TypeKind::ScalarTypeType) {
      const auto dtype = static_cast<at::ScalarType>(args[i].toInt());
      has_f64 |= dtype == at::kDouble;
      has_i64 |= dtype == at::kLong;
    }
  }
  if ((has_f64 || has_i64) && wide64_mode() == Wide64Mode::kError) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, op_name, ": ", has_f64 ? "float64" : "int64",
                                " is not supported on neuron (Trainium computes in 32 bits). "
                                "Cast to ",
                                has_f64 ? "float32" : "int32",
                                ", or set NEURONSIM_64BIT=downcast to compute in 32 bits as "
                                "TorchNeuron does.");
  }
  plan.downcast_f64 = has_f64;
  plan.wrap_i64 = true;  // int64 results are always produced in 32 bits on the device
  plan.bf16_matmul = all_f32 && matmul_mode() == MatmulMode::kBf16 && is_matmul(op.operator_name());
  plan.f32_accumulation = rounds_once(op.operator_name()) && !op.schema().is_mutable() &&
                          reduced_precision_dtype(args).has_value();
  plan.results = result_layouts(op, args, plan);
  return plan;
}

// One neuron tensor argument as handed to the CPU kernel.
struct Binding {
  at::Tensor device;  // the caller's tensor
  at::Tensor cpu;     // what the kernel sees: a view of device memory, or a converted copy
  bool converted = false;
  bool mutable_arg = false;
};

// Most ops have at most four tensor arguments: no heap allocation for them.
using Bindings = c10::SmallVector<Binding, 4>;

at::Tensor to_kernel_input(const at::Tensor& t, const Executable& plan, bool mutable_arg,
                           bool& converted) {
  at::Tensor view = cpu_view(t);
  converted = true;
  if (plan.downcast_f64 && t.scalar_type() == at::kDouble) return view.to(at::kFloat);
  if (plan.wrap_i64 && t.scalar_type() == at::kLong) return view.to(at::kInt).to(at::kLong);
  if (plan.bf16_matmul && !mutable_arg && t.scalar_type() == at::kFloat) {
    return view.to(at::kBFloat16).to(at::kFloat);
  }
  if (plan.f32_accumulation) return view.to(at::kFloat);  // the plan has no mutable argument
  converted = false;
  return view;
}

// A new kernel result, moved to the device with the dtype the caller asked for. A result that
// alone owns its host buffer becomes device memory as it is (no copy); others are copied.
// A plan computing in float32 rounds back to its arguments' dtype (one 16-bit dtype for all).
at::ScalarType result_dtype(const at::Tensor& result, const Executable& plan,
                            const Bindings& bindings) {
  const at::ScalarType dtype = result.scalar_type();
  if (plan.downcast_f64 && dtype == at::kFloat) return at::kDouble;
  if (plan.f32_accumulation && dtype == at::kFloat) return bindings.front().device.scalar_type();
  return dtype;
}

at::Tensor to_device_result(at::Tensor result, const Executable& plan, c10::Device device,
                            const Bindings& bindings) {
  const at::ScalarType dtype = result_dtype(result, plan, bindings);
  if (plan.wrap_i64 && dtype == at::kLong) result.copy_(result.to(at::kInt));  // 32-bit wrap
  c10::StorageImpl* storage = result.storage().unsafeGetStorageImpl();
  if (dtype == result.scalar_type() && result.storage().use_count() == 1 && storage->nbytes() > 0 &&
      storage->data_ptr().device().is_cpu()) {
    const std::size_t nbytes = storage->nbytes();
    c10::DataPtr adopted = DeviceAllocator::instance().adopt(storage->set_data_ptr(c10::DataPtr()),
                                                             nbytes, device.index());
    c10::Storage owned(c10::Storage::use_byte_size_t(), nbytes, std::move(adopted),
                       &DeviceAllocator::instance(), /*resizable=*/true);
    auto out = at::detail::make_tensor<c10::TensorImpl>(
        std::move(owned), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), result.dtype());
    out.unsafeGetTensorImpl()->set_sizes_and_strides(result.sizes(), result.strides(),
                                                     result.storage_offset());
    return out;
  }
  const auto options = result.options().device(device).dtype(dtype);
  at::Tensor out = result.is_non_overlapping_and_dense()
                       ? at::empty_strided(result.sizes(), result.strides(), options)
                       : at::empty(result.sizes(), options);
  cpu_view(out).copy_(result);
  return out;
}

// The device storages an out= argument shares with another tensor argument (cat(x, out=x),
// an out= viewing an input) or with itself (an expanded out=, several elements in one place),
// each with one resizable CPU copy of the whole storage: the CPU kernel sees the tensors over it
// alias as they do on the device, so it refuses an overlap where the CPU refuses it and computes
// through one where the CPU allows it (the out= is written back as any staged out= is). Empty for
// almost every call.
using SharedStorages = c10::SmallVector<std::pair<const c10::StorageImpl*, c10::Storage>, 1>;

c10::Storage staged_copy(const c10::Storage& storage) {
  c10::Storage copy(c10::Storage::use_byte_size_t(), storage.nbytes(), c10::GetCPUAllocator(),
                    /*resizable=*/true);
  if (storage.nbytes() > 0) std::memcpy(copy.mutable_data(), storage.data(), storage.nbytes());
  return copy;
}

SharedStorages storages_shared_with_out(const c10::FunctionSchema& schema,
                                        const torch::jit::Stack& stack, std::size_t first) {
  SharedStorages shared;
  const auto& args = schema.arguments();
  if (std::none_of(args.begin(), args.end(), [](const c10::Argument& a) { return a.is_out(); })) {
    return shared;
  }
  c10::SmallVector<at::Tensor, 2> outs;
  c10::SmallVector<const c10::StorageImpl*, 4> others;
  for (std::size_t i = 0; i < args.size(); ++i) {
    for_each_tensor(stack[first + i], [&](const at::Tensor& t) {
      if (!on_device(t) || !t.has_storage()) return;
      if (args[i].is_out()) {
        outs.push_back(t);
      } else {
        others.push_back(t.storage().unsafeGetStorageImpl());
      }
    });
  }
  for (const at::Tensor& out : outs) {
    const c10::StorageImpl* impl = out.storage().unsafeGetStorageImpl();
    const bool aliased = std::find(others.begin(), others.end(), impl) != others.end() ||
                         at::has_internal_overlap(out) == at::MemOverlap::Yes;
    const bool known = std::any_of(shared.begin(), shared.end(),
                                   [&](const auto& entry) { return entry.first == impl; });
    if (aliased && !known) shared.emplace_back(impl, staged_copy(out.storage()));
  }
  return shared;
}

// Rewrites the op's arguments on the stack for the CPU kernel: views of device memory (or
// converted copies, per the plan) for device tensors, float32 for a float64 dtype argument the
// plan downcasts, and the device generator's CPU engine for a generator argument.
Bindings bind_arguments(const c10::FunctionSchema& schema, const Executable& plan,
                        c10::Device device, torch::jit::Stack& stack) {
  Bindings bindings;
  const auto num_args = schema.arguments().size();
  const auto first = stack.size() - num_args;
  const SharedStorages shared = storages_shared_with_out(schema, stack, first);
  auto shared_storage = [&](const at::Tensor& t) -> const c10::Storage* {
    for (const auto& [impl, storage] : shared) {
      if (impl == t.storage().unsafeGetStorageImpl()) return &storage;
    }
    return nullptr;
  };
  for (std::size_t i = 0; i < num_args; ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    c10::IValue& value = stack[first + i];
    const bool mutable_arg = is_mutable(arg) || written_unannotated(schema, i);
    map_tensors(value, [&](const at::Tensor& t) -> at::Tensor {
      if (!on_device(t)) return t;
      Binding b{t, {}, false, mutable_arg};
      const c10::Storage* storage = shared.empty() ? nullptr : shared_storage(t);
      const bool convertible = (plan.downcast_f64 && t.scalar_type() == at::kDouble) ||
                               (plan.wrap_i64 && t.scalar_type() == at::kLong);
      if (storage != nullptr) {
        // The same tensor as an input and as out= (cat([a, b], out=a)): the kernel must see one
        // tensor too, for the CPU's overlap check knows an out= that *is* an input even when
        // they share no bytes (an empty `a`). It is written back as the out= it also is.
        for (Binding& other : bindings) {
          if (other.device.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
            other.mutable_arg |= mutable_arg;
            return other.cpu;
          }
        }
      }
      if (storage != nullptr && !convertible) {
        b.cpu = cpu_view_over(*storage, t);  // aliasing an out= argument: one staged copy
        b.converted = true;
      } else if (arg.is_out()) {
        // out= kernels may resize their output, which a view of device memory cannot do: give
        // them a CPU tensor of the same geometry and copy the result back. It starts with the
        // device's values: a kernel may leave elements unwritten (batch norm's saved statistics
        // in eval mode), and those must come back as they were, not as uninitialized memory.
        const auto dtype =
            plan.downcast_f64 && t.scalar_type() == at::kDouble ? at::kFloat : t.scalar_type();
        b.cpu =
            at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kCPU).dtype(dtype));
        if (t.numel() > 0) b.cpu.copy_(cpu_view(t));
        b.converted = true;
      } else {
        if (!mutable_arg) {
          // The same tensor twice (x * x, x + x): one view serves both.
          for (const Binding& other : bindings) {
            if (!other.mutable_arg && !other.converted &&
                other.device.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
              return other.cpu;
            }
          }
        }
        b.cpu = to_kernel_input(t, plan, mutable_arg, b.converted);
      }
      bindings.push_back(b);
      return bindings.back().cpu;
    });
    if (arg.real_type()->kind() == c10::TypeKind::ScalarTypeType && value.isInt() &&
        plan.downcast_f64 && static_cast<at::ScalarType>(value.toInt()) == at::kDouble) {
      value = static_cast<int64_t>(at::kFloat);
    } else if (is_generator_argument(arg) && (value.isGenerator() || value.isNone())) {
      std::optional<at::Generator> gen;
      if (value.isGenerator()) gen = value.toGenerator();
      value = engine_of(gen, device.index());
    }
  }
  return bindings;
}

// Writes converted or resized mutable arguments back into device memory.
void write_back(const Bindings& bindings, const Executable& plan) {
  for (const Binding& b : bindings) {
    if (!b.mutable_arg) continue;
    at::Tensor device = b.device;
    if (b.cpu.sizes() != device.sizes()) device.resize_(b.cpu.sizes());
    if (b.converted || b.cpu.data_ptr() != device.data_ptr()) {
      at::Tensor source = b.cpu;
      if (plan.wrap_i64 && device.scalar_type() == at::kLong) source = b.cpu.to(at::kInt);
      cpu_view(device).copy_(source);
    }
  }
}

// Replaces the kernel's results on the stack: the caller's own tensor for in-place and out=
// results, a device alias for a result that views an input, otherwise a new device tensor.
void map_results(const c10::FunctionSchema& schema, const Bindings& bindings,
                 const Executable& plan, c10::Device device, torch::jit::Stack& stack) {
  const auto num_returns = schema.returns().size();
  for (std::size_t i = stack.size() - num_returns; i < stack.size(); ++i) {
    map_tensors(stack[i], [&](const at::Tensor& r) -> at::Tensor {
      if (!r.defined()) return r;
      for (const Binding& b : bindings) {
        if (r.unsafeGetTensorImpl() == b.cpu.unsafeGetTensorImpl()) return b.device;
      }
      for (const Binding& b : bindings) {
        if (!b.converted && r.is_alias_of(b.cpu)) {
          return b.device.as_strided(r.sizes(), r.strides(),
                                     b.device.storage_offset() + r.storage_offset());
        }
      }
      return to_device_result(r, plan, device, bindings);
    });
  }
}

// Whether the call writes an argument with elements in one place (an expanded out= or running
// mean) or an out= sharing storage with another argument: a property of the call, not of its
// signature, which the CPU kernel accepts or refuses by the memory it sees.
bool has_aliased_write(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const auto num_args = schema.arguments().size();
  const auto first = stack.size() - num_args;
  bool overlapping_write = false;
  for (std::size_t i = 0; i < num_args && !overlapping_write; ++i) {
    if (!is_mutable(schema.arguments()[i])) continue;
    for_each_tensor(stack[first + i], [&](const at::Tensor& t) {
      overlapping_write |= on_device(t) && at::has_internal_overlap(t) == at::MemOverlap::Yes;
    });
  }
  return overlapping_write || !storages_shared_with_out(schema, stack, first).empty();
}

// Runs the op's CPU kernel (or its substitute's) on the bound stack.
void run_kernel(const c10::OperatorHandle& op, const CpuSubstitute* substitute,
                torch::jit::Stack& stack) {
  const c10::DispatchKeySet cpu(c10::DispatchKey::CPU);
  if (substitute == nullptr) {
    op.redispatchBoxed(cpu, &stack);
  } else {
    if (substitute->adapt) substitute->adapt(stack, stack.size() - op.schema().arguments().size());
    substitute->cpu_op.redispatchBoxed(cpu, &stack);
  }
}

// Copies a queued op's kernel results into the device tensors its call handed out.
void fill_results(const Executable& plan, const torch::jit::Stack& stack, std::size_t num_returns,
                  const std::vector<at::Tensor>& fresh) {
  std::size_t next = 0;
  const std::size_t first = stack.size() - num_returns;
  for (std::size_t i = 0; i < num_returns; ++i) {
    if ((*plan.results)[i].kind != ResultLayout::Kind::kFresh) continue;
    const at::Tensor& result = stack[first + i].toTensor();
    const at::Tensor& out = fresh[next++];
    TORCH_CHECK(result.sizes() == out.sizes(), plan.op, ": the kernel's result has sizes ",
                result.sizes(), " where the compiled layout has ", out.sizes(),
                " (the op's Meta kernel disagrees with its CPU kernel)");
    const bool wrap = plan.wrap_i64 && out.scalar_type() == at::kLong;
    cpu_view(out).copy_(wrap ? result.to(at::kInt) : result);
  }
}

// Queues the op on its device's current stream: its results are made now from the plan's
// layouts and handed back; the kernel runs later, in stream order, on the queue's thread, and
// writes them. The work holds its operands until it has run.
void defer(const c10::OperatorHandle& op, const CpuSubstitute* substitute,
           std::shared_ptr<const Executable> plan, c10::Device device, torch::jit::Stack& stack) {
  const auto num_args = op.schema().arguments().size();
  torch::jit::Stack args(stack.end() - static_cast<std::ptrdiff_t>(num_args), stack.end());
  torch::jit::drop(stack, num_args);
  std::vector<at::Tensor> tensors;  // as the layouts count them
  // The work sees the arguments as they are now: device tensors through frozen aliases (one per
  // tensor, so an argument passed twice stays one tensor), CPU scalars copied, for the caller
  // may change them after the call returns.
  c10::SmallVector<std::pair<const c10::TensorImpl*, at::Tensor>, 4> aliases;
  for (c10::IValue& value : args) {
    map_tensors(value, [&](const at::Tensor& t) -> at::Tensor {
      tensors.push_back(t);
      if (!t.defined()) return t;
      if (!on_device(t)) {
        at::Tensor copy = t.clone();  // a wrapped number stays one: it promotes as a scalar
        auto* impl = copy.unsafeGetTensorImpl();
        impl->set_wrapped_number(t.unsafeGetTensorImpl()->is_wrapped_number());
        return copy;
      }
      for (const auto& [impl, alias] : aliases) {
        if (impl == t.unsafeGetTensorImpl()) return alias;
      }
      aliases.emplace_back(t.unsafeGetTensorImpl(), frozen_alias(t));
      return aliases.back().second;
    });
  }
  std::vector<at::Tensor> fresh;  // what the work writes
  for (const ResultLayout& layout : *plan->results) {
    switch (layout.kind) {
      case ResultLayout::Kind::kFresh:
        stack.emplace_back(at::empty_strided(
            layout.sizes, layout.strides, at::TensorOptions().device(device).dtype(layout.dtype)));
        fresh.push_back(frozen_alias(stack.back().toTensor()));
        break;
      case ResultLayout::Kind::kArgument:
        stack.emplace_back(tensors.at(static_cast<std::size_t>(layout.argument)));
        break;
      case ResultLayout::Kind::kView: {
        const at::Tensor& base = tensors.at(static_cast<std::size_t>(layout.argument));
        stack.emplace_back(
            base.as_strided(layout.sizes, layout.strides, base.storage_offset() + layout.offset));
        break;
      }
    }
  }
  Work work;
  work.op = plan->op;
  if (fusible(op, *plan)) work.fusion_key = plan->key;
  work.run = [op, substitute, plan, device, args = std::move(args), fresh = std::move(fresh)] {
    torch::jit::Stack stack = args;
    const Bindings bindings = bind_arguments(op.schema(), *plan, device, stack);
    run_kernel(op, substitute, stack);
    write_back(bindings, *plan);
    fill_results(*plan, stack, op.schema().returns().size(), fresh);
  };
  Executor::instance().enqueue(current_stream(device.index()), std::move(work));
}

// Times nothing: the hot path's policy (every call inlines to nothing).
struct Untimed {
  void lap(Stage) {}
};

// Adds the time since the previous lap to the stage just finished.
struct Timed {
  std::array<double, kStageCount>& seconds;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  void lap(Stage stage) {
    const auto now = std::chrono::steady_clock::now();
    seconds[static_cast<std::size_t>(stage)] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};

template <typename Timer>
void run(const c10::OperatorHandle& op, const CpuSubstitute* substitute, torch::jit::Stack* stack,
         Timer&& timer) {
  const auto& schema = op.schema();
  const auto num_args = schema.arguments().size();
  const auto args = torch::jit::last(*stack, num_args);

  std::optional<c10::Device> device;
  for (const c10::IValue& arg : args) {
    for_each_tensor(arg, [&](const at::Tensor& t) {
      if (!device && on_device(t)) device = t.device();
    });
  }
  TORCH_CHECK(device.has_value(), overload_name(op),
              " reached the neuron engine without a neuron tensor");
  check_same_device(op, args);
  const c10::DeviceGuard guard(*device);
  timer.lap(Stage::kDevice);

  thread_local MemoryKey key;  // reused: no allocation per call once it has grown
  memory_key(op, *stack, key);
  const auto plan = CompileCache::instance().get_or_compile(
      key, [&] { return signature(op, *stack); },
      [&](const std::string& key) { return lower(op, key, torch::jit::last(*stack, num_args)); });
  timer.lap(Stage::kPlan);
  if (plan->cpu_fallback) {
    run_fallback(op, stack);
    return;
  }
  // Queued unless the device runs ops at their call; the stage timings time the call itself.
  if (std::is_same_v<std::decay_t<Timer>, Untimed> && plan->results && !launch_blocking() &&
      !has_aliased_write(schema, *stack)) {
    defer(op, substitute, plan, *device, *stack);
    record_native(op);
    return;
  }
  drain(device->index());  // what is queued before this call runs before it

  const Bindings bindings = bind_arguments(schema, *plan, *device, *stack);
  timer.lap(Stage::kBind);
  run_kernel(op, substitute, *stack);
  timer.lap(Stage::kKernel);
  write_back(bindings, *plan);
  map_results(schema, bindings, *plan, *device, *stack);
  timer.lap(Stage::kResults);
  record_native(op);
  timer.lap(Stage::kTracking);
}

}  // namespace

bool run_aliased_out(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const auto num_args = schema.arguments().size();
  if (!has_aliased_write(schema, *stack)) return false;
  std::optional<c10::Device> device;
  for_each_device_tensor(torch::jit::last(*stack, num_args), [&](const at::Tensor& t) {
    if (!device) device = t.device();
  });
  if (!device) return false;
  const c10::DeviceGuard guard(*device);
  drain(device->index());
  const Executable plan;  // the CPU's own computation: no conversion
  const Bindings bindings = bind_arguments(schema, plan, *device, *stack);
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  write_back(bindings, plan);
  map_results(schema, bindings, plan, *device, *stack);
  return true;
}

void run_native(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run(op, nullptr, stack, Untimed{});
}

void run_native_as(const c10::OperatorHandle& op, const CpuSubstitute& substitute,
                   torch::jit::Stack* stack) {
  run(op, &substitute, stack, Untimed{});
}

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::kDevice: return "device and guard";
    case Stage::kPlan: return "plan (key + cache hit)";
    case Stage::kBind: return "bind inputs (views)";
    case Stage::kKernel: return "cpu kernel";
    case Stage::kResults: return "results to device";
    case Stage::kTracking: return "op tracking";
    case Stage::kFree: return "free results";
  }
  return "?";
}

std::array<double, kStageCount> time_stages(const c10::OperatorHandle& op,
                                            const torch::jit::Stack& args, int iterations) {
  std::array<double, kStageCount> seconds{};
  for (int i = 0; i < iterations; ++i) {
    torch::jit::Stack stack = args;
    Timed timer{seconds};
    run(op, nullptr, &stack, timer);
    stack.clear();  // the results die here, as a caller's temporaries do
    timer.lap(Stage::kFree);
  }
  for (double& s : seconds) s /= iterations;
  return seconds;
}

}  // namespace neuronsim::engine
