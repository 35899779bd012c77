#include "engine/DeviceCheck.h"

#include "engine/Arguments.h"
#include "engine/CallKey.h"

#include <c10/util/Exception.h>

#include <optional>

namespace neuronsim::engine {
namespace {

// Arguments whose CPU tensors an op takes beside device ones: optional-tensor lists (the
// indices of index and index_put_) and tensor_split's tensor_indices_or_sections.
bool takes_cpu_tensors(const c10::Argument& arg) {
  if (arg.name() == "tensor_indices_or_sections") return true;
  const auto& type = arg.real_type();
  if (type->kind() != c10::TypeKind::ListType) return false;
  const auto& element = type->expectRef<c10::ListType>().getElementType();
  return element->kind() == c10::TypeKind::OptionalType;
}

}  // namespace

void check_same_device(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args) {
  const auto& schema = op.schema().arguments();
  std::optional<c10::Device> common;
  for (const c10::IValue& arg : args) {
    for_each_tensor(arg, [&](const at::Tensor& t) {
      if (!common && on_device(t)) common = t.device();
    });
  }
  if (!common) return;
  for (std::size_t i = 0; i < args.size() && i < schema.size(); ++i) {
    // A CPU scalar is read, never written: a CPU self of an in-place op or a CPU out= is refused
    // (the kernel would write a result the engine moves into device memory, taking the CPU
    // tensor's buffer from it).
    const bool written = schema[i].alias_info() != nullptr && schema[i].alias_info()->isWrite();
    const bool cpu_allowed = takes_cpu_tensors(schema[i]);
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      if (!t.defined() || t.device() == *common) return;
      if (t.device().is_cpu() && !written && (t.dim() == 0 || cpu_allowed)) return;
      TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ",
                  *common, " and ", t.device(), "! (when checking argument ", schema[i].name(),
                  " of ", overload_name(op), ")");
    });
  }
}

}  // namespace neuronsim::engine
