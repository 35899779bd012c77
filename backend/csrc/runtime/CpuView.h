#pragma once

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

namespace neuronsim {

namespace detail {
// The bytes of `t`'s storage from its first element: what a view of it may address.
inline std::size_t bytes_from_first(const at::Tensor& t) {
  return t.storage().nbytes() - static_cast<std::size_t>(t.storage_offset()) * t.itemsize();
}
// The address of `t`'s first element, from its storage: t.data_ptr() is null for a tensor of no
// elements even where its storage has bytes (an empty slice of a larger tensor), and a view with
// those bytes and a null address makes a kernel that reads the whole storage (clone_preserve_
// strides, in slice_scatter) read address 0.
inline void* first_element(const at::Tensor& t) {
  auto* base = static_cast<char*>(t.storage().data_ptr().get());
  return base == nullptr ? nullptr : base + t.storage_offset() * t.itemsize();
}
// Sizes, strides and the lazy conjugation and negation bits, which are properties of the
// view, not of the memory.
inline void take_geometry(c10::TensorImpl& view, const at::Tensor& t) {
  view.set_sizes_and_strides(t.sizes(), t.strides());
  view._set_conj(t.is_conj());
  view._set_neg(t.is_neg());
}
}  // namespace detail

// A CPU tensor aliasing the memory of a neuron tensor (same sizes, strides, offset, dtype).
// Device memory is host memory, so ATen's CPU kernels can work on it in place.
// Built directly (what at::from_blob does, minus its option handling): this runs twice or
// more per op on the engine's hot path.
inline at::Tensor cpu_view(const at::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  // The storage covers the tensor's elements from its first one; it never owns the memory.
  c10::Storage storage(c10::Storage::use_byte_size_t(), detail::bytes_from_first(t),
                       c10::DataPtr(detail::first_element(t), c10::Device(c10::kCPU)), nullptr,
                       false);
  auto view = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  detail::take_geometry(*view.unsafeGetTensorImpl(), t);
  return view;
}

// A CPU tensor over `storage` (a CPU storage standing for t's whole storage) with t's sizes,
// strides and offset: tensors made over one such storage alias as they alias on the device.
inline at::Tensor cpu_view_over(const c10::Storage& storage, const at::Tensor& t) {
  auto view = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  view.unsafeGetTensorImpl()->set_storage_offset(t.storage_offset());
  detail::take_geometry(*view.unsafeGetTensorImpl(), t);
  return view;
}

// A device tensor of t's memory with t's geometry as it is now: what queued work holds, so that a
// later in-place change of t's sizes or strides (t_(), squeeze_()) does not reach it. Its storage
// is a lease on the memory (DeviceAllocator::lease), not t's storage: the memory stays until the
// work is gone, and t's storage counts its callers' references only.
at::Tensor frozen_alias(const at::Tensor& t);

// cpu_view(t), built in `slot`: the slot's TensorImpl and StorageImpl are reused when nothing
// else holds them and the dtype is the same. An op's fast path keeps a slot per operand per
// thread: a view built anew costs two heap allocations and frees, a third of a small op's time
// above its kernel. Returned by value, so a call that finds its slot taken (a nested call)
// builds a new view and leaves the holder's alone.
inline at::Tensor cpu_view_in(at::Tensor& slot, const at::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;  // the slot never holds a caller's tensor
  c10::TensorImpl* view = slot.defined() ? slot.unsafeGetTensorImpl() : nullptr;
  // A view built under InferenceMode is an inference tensor for good (no version counter, no
  // autograd keys): reused only in the mode it was built in.
  if (view == nullptr || slot.use_count() != 1 || view->storage().use_count() != 1 ||
      slot.dtype() != t.dtype() || view->is_inference() != c10::InferenceMode::is_enabled()) {
    slot = cpu_view(t);
    return slot;
  }
  c10::StorageImpl* storage = view->storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(c10::DataPtr(detail::first_element(t), c10::Device(c10::kCPU)));
  storage->set_nbytes(detail::bytes_from_first(t));
  view->set_storage_offset(0);
  detail::take_geometry(*view, t);
  return slot;
}

}  // namespace neuronsim
