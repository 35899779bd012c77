#include "engine/Rules.h"

#include "engine/Arguments.h"

#include "runtime/Device.h"

#include <c10/util/Exception.h>

#include <unordered_set>

namespace neuronsim::engine {
std::string dtype_name(at::ScalarType dtype) {
  return std::string(c10::getDtypeNames(dtype).first);
}

std::string device_dtypes(c10::ArrayRef<c10::IValue> args) {
  std::string out;
  for_each_device_tensor(args, [&](const at::Tensor& t) {
    const std::string name = dtype_name(t.scalar_type());
    if (out.find(name) == std::string::npos) out += (out.empty() ? "" : ", ") + name;
  });
  return out.empty() ? "no device tensors" : out;
}

void check_no_complex(const std::string& op_name, c10::ArrayRef<c10::IValue> args) {
  for_each_device_tensor(args, [&](const at::Tensor& t) {
    TORCH_CHECK_NOT_IMPLEMENTED(!c10::isComplexType(t.scalar_type()), op_name, ": ",
                                dtype_name(t.scalar_type()),
                                " is not supported on neuron: Trainium has no "
                                "complex arithmetic. Run this op on the CPU (tensor.cpu()).");
  });
}

void check_not_sparse_conversion(const c10::OperatorHandle& op) {
  static const std::unordered_set<std::string> kToSparse{"aten::to_sparse",
                                                         "aten::_to_sparse",
                                                         "aten::to_sparse_csr",
                                                         "aten::_to_sparse_csr",
                                                         "aten::to_sparse_csc",
                                                         "aten::_to_sparse_csc",
                                                         "aten::to_sparse_bsr",
                                                         "aten::_to_sparse_bsr",
                                                         "aten::to_sparse_bsc",
                                                         "aten::_to_sparse_bsc",
                                                         "aten::_to_sparse_semi_structured"};
  TORCH_CHECK_NOT_IMPLEMENTED(!kToSparse.contains(op.operator_name().name),
                              c10::toString(op.operator_name()),
                              ": sparse tensors are not supported on neuron. Keep sparse tensors "
                              "on the CPU, or use dense tensors on the device.");
}

bool has_data_dependent_shape(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args) {
  static const std::unordered_set<std::string> kDataDependent{"aten::nonzero",
                                                              "aten::nonzero_numpy",
                                                              "aten::argwhere",
                                                              "aten::_unique",
                                                              "aten::_unique2",
                                                              "aten::unique_dim",
                                                              "aten::unique_consecutive",
                                                              "aten::unique_dim_consecutive",
                                                              "aten::masked_select",
                                                              "aten::bincount",
                                                              "aten::repeat_interleave"};
  const auto& name = op.operator_name();
  if (kDataDependent.contains(name.name)) {
    // repeat_interleave has a static shape when repeats is a Python int.
    return name.name != "aten::repeat_interleave" || name.overload_name != "self_int";
  }
  if (name.name == "aten::index" || name.name == "aten::_index_put_impl_" ||
      name.name == "aten::index_put" || name.name == "aten::index_put_") {
    // Boolean-mask indexing selects as many elements as the mask has true values.
    if (name.name != "aten::index") return false;
    for (const c10::IValue& arg : args) {
      if (!arg.isList()) continue;
      for (const c10::IValue& item : arg.toListRef()) {
        if (item.isTensor() && (item.toTensor().scalar_type() == at::kBool ||
                                item.toTensor().scalar_type() == at::kByte)) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace neuronsim::engine
