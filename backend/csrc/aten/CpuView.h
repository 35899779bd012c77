#pragma once

#include <ATen/ATen.h>

namespace neuronsim {

// A CPU tensor aliasing the memory of a neuron tensor (same sizes, strides, offset, dtype).
// Device memory is host memory, so ATen's CPU kernels can work on it in place.
inline at::Tensor cpu_view(const at::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  // No deleter: the view never owns the memory (and skips a heap-allocated context).
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

}  // namespace neuronsim
