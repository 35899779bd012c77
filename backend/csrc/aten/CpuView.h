#pragma once

#include <ATen/ATen.h>

namespace neuronsim {

// A CPU tensor aliasing the memory of a neuron tensor (same sizes, strides, offset, dtype).
// Device memory is host memory, so ATen's CPU kernels can work on it in place.
// Built directly (what at::from_blob does, minus its option handling): this runs twice or
// more per op on the engine's hot path.
inline at::Tensor cpu_view(const at::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  const auto& src = t.storage();
  // The storage covers the tensor's elements from its first one; it never owns the memory.
  const std::size_t nbytes =
      src.nbytes() - static_cast<std::size_t>(t.storage_offset()) * t.itemsize();
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
                       c10::DataPtr(t.data_ptr(), c10::Device(c10::kCPU)), nullptr, false);
  auto view = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  auto* impl = view.unsafeGetTensorImpl();
  impl->set_sizes_and_strides(t.sizes(), t.strides());
  // Lazy conjugation and negation are properties of the view, not of the memory.
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return view;
}

}  // namespace neuronsim
