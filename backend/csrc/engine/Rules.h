#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <string>

namespace neuronsim::engine {

// What the device refuses, shared by the engine and the fallback so that an op gets the same
// answer whichever way it reaches the device. Each check names the op and the reason.

// Raises NotImplementedError if a neuron tensor argument is complex.
void check_no_complex(const std::string& op_name, c10::ArrayRef<c10::IValue> args);

// Raises NotImplementedError for conversions to sparse layouts (to_sparse and friends).
void check_not_sparse_conversion(const c10::OperatorHandle& op);

// True when the op's output shape depends on tensor values (nonzero, unique, masked_select,
// boolean-mask indexing, ...): such ops cannot be compiled for static shapes.
bool has_data_dependent_shape(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args);

// PyTorch's Python name of a dtype: "float32", "complex64".
std::string dtype_name(at::ScalarType dtype);

// "float32, int64": the dtypes of the neuron tensor arguments, for messages.
std::string device_dtypes(c10::ArrayRef<c10::IValue> args);

}  // namespace neuronsim::engine
