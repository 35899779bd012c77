#include "engine/ResultLayouts.h"

#include "engine/Arguments.h"
#include "runtime/Generator.h"

#include <ATen/core/stack.h>
#include <ATen/ops/empty_strided.h>
#include <c10/util/Exception.h>

namespace neuronsim::engine {
namespace {

// What the Meta kernel warns (an out= resized, a deprecation) is warned again when the op runs.
struct DiscardWarnings final : c10::WarningHandler {
  void process(const c10::Warning&) override {}
};

}  // namespace

std::optional<std::vector<ResultLayout>> result_layouts(const c10::OperatorHandle& op,
                                                        c10::ArrayRef<c10::IValue> args) {
  const auto& schema = op.schema();
  for (const auto& arg : schema.arguments()) {
    if (is_generator_argument(arg)) return std::nullopt;
  }
  for (const auto& ret : schema.returns()) {
    if (ret.real_type()->kind() != c10::TypeKind::TensorType) return std::nullopt;
  }
  // The call's tensors in argument order (lists flattened), and what the Meta kernel sees.
  std::vector<at::Tensor> originals, metas;
  bool covered = true;
  torch::jit::Stack stack(args.begin(), args.end());
  for (c10::IValue& value : stack) {
    map_tensors(value, [&](const at::Tensor& t) -> at::Tensor {
      at::Tensor stand_in = t;
      if (on_device(t)) {
        stand_in = at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
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
  return layouts;
}

}  // namespace neuronsim::engine
