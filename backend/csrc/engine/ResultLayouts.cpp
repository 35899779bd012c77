#include "engine/ResultLayouts.h"

#include "engine/Arguments.h"
#include "runtime/Generator.h"

#include <ATen/core/stack.h>
#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

namespace neuronsim::engine {
namespace {

// What the Meta kernel warns (an out= resized, a deprecation) is warned again when the op runs.
struct DiscardWarnings final : c10::WarningHandler {
  void process(const c10::Warning&) override {}
};

// The dtype the plan's kernel computes a device tensor in (as the engine binds it).
at::ScalarType kernel_dtype(const Executable& plan, at::ScalarType dtype) {
  if (plan.downcast_f64 && dtype == at::kDouble) return at::kFloat;
  if (plan.f32_accumulation) return at::kFloat;
  return dtype;
}

// Runs the CPU kernel once on zeros of the call's geometry and dtypes, as the plan binds them:
// what proves a signature before its calls are queued. A dtype or shape the CPU kernel refuses
// and the Meta kernel let through makes this fail, and the op then runs at its call, where the
// refusal is raised as the CPU raises it; so does a layout the kernel does not produce. Zeros
// are a valid index and a neutral value almost everywhere; where they are not (an integer
// division by zero), the op runs at its call, which is always right. A fresh result takes the
// strides the CPU kernel gave it.
bool trial_agrees(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args,
                  const Executable& plan, std::vector<ResultLayout>& layouts) {
  torch::jit::Stack stack(args.begin(), args.end());
  std::vector<at::Tensor> trials;  // as the layouts count the call's tensors
  c10::SmallVector<std::pair<const c10::TensorImpl*, at::Tensor>, 4> made;
  for (std::size_t i = 0; i < stack.size(); ++i) {
    c10::IValue& value = stack[i];
    map_tensors(value, [&](const at::Tensor& t) -> at::Tensor {
      at::Tensor trial = t;
      if (on_device(t)) {
        for (const auto& [impl, tensor] : made) {
          if (impl == t.unsafeGetTensorImpl()) trial = tensor;
        }
        if (trial.is_same(t)) {
          const auto dtype = kernel_dtype(plan, t.scalar_type());
          const auto bytes =
              at::detail::computeStorageNbytes(t.sizes(), t.strides(), c10::elementSize(dtype));
          const auto elements = static_cast<std::int64_t>(bytes / c10::elementSize(dtype));
          trial = at::zeros({elements}, at::TensorOptions().dtype(dtype))
                      .as_strided(t.sizes(), t.strides());
          made.emplace_back(t.unsafeGetTensorImpl(), trial);
        }
      }
      trials.push_back(trial);
      return trial;
    });
    const auto& type = op.schema().arguments()[i].real_type();
    if (plan.downcast_f64 && value.isInt() && type->kind() == c10::TypeKind::ScalarTypeType &&
        static_cast<at::ScalarType>(value.toInt()) == at::kDouble) {
      value = static_cast<std::int64_t>(at::kFloat);
    }
  }
  try {
    DiscardWarnings discard;
    const c10::WarningUtils::WarningHandlerGuard guard(&discard);
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
  } catch (...) {
    return false;
  }
  const auto returned = torch::jit::last(stack, layouts.size());
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    if (!returned[i].isTensor()) return false;
    const at::Tensor& r = returned[i].toTensor();
    ResultLayout& layout = layouts[i];
    if (layout.kind == ResultLayout::Kind::kArgument) {
      if (!r.is_same(trials.at(static_cast<std::size_t>(layout.argument)))) return false;
      continue;
    }
    // The CPU kernel is the reference: a Meta kernel may give another dtype (a 16-bit norm's
    // float32 statistics) or other strides (a channels-last input's padding or pixel shuffle).
    if (r.sizes() != c10::IntArrayRef(layout.sizes) ||
        r.scalar_type() != kernel_dtype(plan, layout.dtype)) {
      return false;
    }
    if (layout.kind == ResultLayout::Kind::kView) {
      if (r.strides() != c10::IntArrayRef(layout.strides)) return false;
    } else if (r.is_non_overlapping_and_dense()) {
      layout.strides = r.strides().vec();  // as the CPU lays it out
    } else {
      layout.strides = at::empty(r.sizes(), at::kMeta).strides().vec();  // a copy's: contiguous
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<ResultLayout>> result_layouts(const c10::OperatorHandle& op,
                                                        c10::ArrayRef<c10::IValue> args,
                                                        const Executable& plan) {
  const auto& schema = op.schema();
  for (const auto& arg : schema.arguments()) {
    if (is_generator_argument(arg)) return std::nullopt;
    // A kernel given a device makes its result there, through device ops of its own.
    const auto& type = arg.real_type();
    const bool device_type =
        type->kind() == c10::TypeKind::DeviceObjType ||
        (type->kind() == c10::TypeKind::OptionalType &&
         type->containedTypes()[0]->kind() == c10::TypeKind::DeviceObjType);
    if (device_type) return std::nullopt;
  }
  for (const auto& ret : schema.returns()) {
    if (ret.real_type()->kind() != c10::TypeKind::TensorType) return std::nullopt;
  }
  // The call's tensors in argument order (lists flattened), and what the Meta kernel sees.
  std::vector<at::Tensor> originals, metas;
  bool covered = true;
  torch::jit::Stack stack(args.begin(), args.end());
  for (std::size_t i = 0; i < stack.size(); ++i) {
    // An out= stands in empty: the Meta kernel sizes it without warning (a Python Meta kernel
    // warns through Python's own warnings, out of the engine's reach), and a size other than
    // the caller's means a resize.
    const bool out = schema.arguments()[i].is_out();
    map_tensors(stack[i], [&](const at::Tensor& t) -> at::Tensor {
      at::Tensor stand_in = t;
      if (on_device(t)) {
        const auto meta = t.options().device(c10::kMeta);
        stand_in = out ? at::empty({0}, meta) : at::empty_strided(t.sizes(), t.strides(), meta);
      } else if (t.defined() && t.dim() != 0) {
        covered = false;
      }
      originals.push_back(t);
      metas.push_back(stand_in);
      return stand_in;
    });
  }
  if (!covered) return std::nullopt;
  try {
    DiscardWarnings discard;
    const c10::WarningUtils::WarningHandlerGuard guard(&discard);
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &stack);
  } catch (...) {
    // No Meta kernel, or one that refuses the call: the op runs at its call, where the CPU
    // kernel raises what it raises.
    return std::nullopt;
  }
  for (std::size_t j = 0; j < metas.size(); ++j) {
    if (metas[j].defined() && metas[j].is_meta() && metas[j].sizes() != originals[j].sizes()) {
      return std::nullopt;  // a written argument resized
    }
  }
  std::vector<ResultLayout> layouts;
  for (const c10::IValue& value : torch::jit::last(stack, schema.returns().size())) {
    if (!value.isTensor() || !value.toTensor().defined()) return std::nullopt;
    const at::Tensor& r = value.toTensor();
    ResultLayout layout;
    layout.dtype = r.scalar_type();
    layout.sizes = r.sizes().vec();
    layout.strides = r.strides().vec();
    for (std::size_t j = 0; j < metas.size(); ++j) {
      if (!metas[j].defined() || !metas[j].is_meta()) continue;
      if (r.unsafeGetTensorImpl() == metas[j].unsafeGetTensorImpl()) {
        layout.kind = ResultLayout::Kind::kArgument;
        layout.argument = static_cast<int>(j);
        break;
      }
      if (layout.argument < 0 && r.is_alias_of(metas[j])) {
        layout.kind = ResultLayout::Kind::kView;
        layout.argument = static_cast<int>(j);
        layout.offset = r.storage_offset() - metas[j].storage_offset();
      }
    }
    layouts.push_back(std::move(layout));
  }
  if (!trial_agrees(op, args, plan, layouts)) return std::nullopt;
  return layouts;
}

}  // namespace neuronsim::engine
