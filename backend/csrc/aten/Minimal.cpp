// The minimal aten set a PrivateUse1 device must provide itself: allocation, views, resizing,
// storage swaps and reading a scalar. Everything else reaches the device through the kernels
// in this folder or the CPU fallback.
#include "runtime/CpuView.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Executor.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace neuronsim {
namespace {

constexpr c10::DispatchKeySet kNeuronKeys(c10::DispatchKey::PrivateUse1);

void check_factory_options(std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "neuron supports only strided tensors, not layout ", c10::layout_or_default(layout),
              " (sparse layouts are not supported on the device; keep them on the CPU)");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory),
              "pin_memory=True applies to CPU tensors only, not to tensors created on neuron");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<c10::MemoryFormat> memory_format) {
  check_factory_options(layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, &DeviceAllocator::instance(), kNeuronKeys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  check_factory_options(layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &DeviceAllocator::instance(), kNeuronKeys,
                                           c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, c10::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(self.device());
  drain(self.device().index());  // growing moves the bytes queued work may still use
  return at::native::resize_(self, size, memory_format);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  drain(self.device().index());
  return at::native::_local_scalar_dense_cpu(cpu_view(self));
}

// Tensor.record_stream: the allocator's (which needs nothing more: queued work holds a lease on
// its operands' memory).
void record_stream(at::Tensor& self, c10::Stream stream) {
  DeviceAllocator::instance().recordStream(self.storage().data_ptr(), stream);
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  return at::native::set_(self, source);
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset,
                                      c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, offset, size, stride);
}

at::Tensor& set_empty(at::Tensor& self) {
  // A fresh, empty storage on the same device.
  const c10::DeviceGuard guard(self.device());
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &DeviceAllocator::instance(), true);
  return at::native::set_storage_cpu_(self, storage, 0, {0}, {});
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", as_strided);
  m.impl("view", view);
  // A view like the two above (as_strided of its input, so it aliases device memory): the
  // fallback would hand back a copy. Bloom's generate unfolds its attention mask.
  m.impl("unfold", at::native::unfold);
  m.impl("_reshape_alias", reshape_alias);
  m.impl("resize_", resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("record_stream", record_stream);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_source_storage_offset);
  m.impl("set_", set_empty);
}

}  // namespace neuronsim
