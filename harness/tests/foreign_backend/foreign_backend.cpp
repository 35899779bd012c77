// A test-only PyTorch backend, "foreign", for the harness's own tests: they run the harness on a
// backend it was not written for and check that its reports tell the truth. It is deliberately
// small and unlike the bundled backend: tensors live in host memory, three compute kernels are
// its own (add and mul correct, mm wrong on purpose) and every other op reaches the CPU through
// PyTorch's boxed fallback. A harness must report add and mul as native, mm as a failure and the
// rest as fallback. No introspection API: the harness has to find all that out by itself.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/add.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/library.h>

namespace foreign {
namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;
constexpr c10::DeviceIndex kDeviceCount = 2;
constexpr c10::DispatchKeySet kForeignKeys(c10::DispatchKey::PrivateUse1);

// Each thread has its own current device, as with CUDA; DeviceGuard switches it around kernels.
thread_local c10::DeviceIndex t_current_device = 0;

void check_index(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < kDeviceCount, "foreign: device index ", int(index),
              " is out of range (there are ", int(kDeviceCount), " devices)");
}

// Device memory is host memory: the tensors' data is plain CPU memory tagged with the current
// foreign device, so a CPU tensor can alias it (see host_alias).
struct HostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = c10::alloc_cpu(nbytes);
    return {data, data, &release, c10::Device(kDevice, t_current_device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
  static void release(void* data) { c10::free_cpu(data); }
};

HostAllocator g_allocator;
REGISTER_ALLOCATOR(kDevice, &g_allocator)

// Two devices, one default stream each; work is synchronous, so streams and devices are always
// in sync and events are never needed.
struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device device) const override {
    const c10::Device previous = getDevice();
    setDevice(device);
    return previous;
  }
  c10::Device getDevice() const override { return {kDevice, t_current_device}; }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.type() == kDevice, "foreign: cannot make ", device, " current");
    check_index(device.index());
    t_current_device = device.index();
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    t_current_device = device.index();
  }
  c10::Stream getStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    return c10::Stream(c10::Stream::DEFAULT, stream.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override { return kDeviceCount; }
  bool queryStream(const c10::Stream& /*stream*/) const override { return true; }
  void synchronizeStream(const c10::Stream& /*stream*/) const override {}
  void synchronizeDevice(c10::DeviceIndex /*device_index*/) const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

// Once PrivateUse1 has a name, ATen takes it for the accelerator and asks it these, failing if no
// hooks are registered: every backward pass asks hasPrimaryContext of each device.
struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override {
    return device_index >= 0 && device_index < kDeviceCount;
  }
};

const bool g_hooks_registered = [] {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

// A CPU tensor over the same memory as a foreign one (CPU tensors are returned as they are), so
// CPU kernels can read and write device tensors in place. It holds the storage alive.
at::Tensor host_alias(const at::Tensor& tensor) {
  if (tensor.device().type() != kDevice) return tensor;
  c10::Storage storage = tensor.storage();
  return at::from_blob(
      storage.mutable_data(), tensor.sizes(), tensor.strides(), tensor.storage_offset(),
      [storage](void* /*data*/) {}, tensor.options().device(c10::kCPU));
}

// The device a compute kernel's result goes to. Like every real backend it takes no CPU tensor
// but a 0-dim one, and no tensor from another foreign device.
c10::Device result_device(const at::Tensor& a, const at::Tensor& b) {
  const c10::Device device = a.device().type() == kDevice ? a.device() : b.device();
  for (const at::Tensor* tensor : {&a, &b}) {
    TORCH_CHECK(tensor->device() == device || (tensor->is_cpu() && tensor->dim() == 0),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                a.device(), " and ", b.device(), "!");
  }
  return device;
}

// --- What every backend must provide itself: allocation, views, resizing, copies, scalars.

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> /*pin_memory*/,
                               std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "foreign: only strided tensors are supported");
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, &g_allocator, kForeignKeys, c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "foreign: only strided tensors are supported");
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &g_allocator, kForeignKeys,
                                           c10::dtype_or_default(dtype));
}

const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  // The CPU resize reallocates through the storage's own allocator, i.e. ours; the guard makes
  // the new block carry the tensor's device.
  const c10::DeviceGuard guard(self.device());
  return at::native::resize_(self, size, memory_format);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  // Both sides are host memory, so the CPU copy (strides, dtype conversion) does it all.
  host_alias(dst).copy_(host_alias(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  // The CPU fallback's way of writing an out= result whose size was not known beforehand.
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  return at::native::_local_scalar_dense_cpu(host_alias(self));
}

// --- The compute kernels: add and mul are right, mm is wrong on purpose.

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const c10::Device device = result_device(self, other);
  return at::add(host_alias(self), host_alias(other), alpha).to(device);
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  const c10::Device device = result_device(self, other);
  return at::mul(host_alias(self), host_alias(other)).to(device);
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  const c10::Device device = result_device(self, mat2);
  // The planted defect: the right product, off by 0.25 everywhere.
  return at::mm(host_alias(self), host_alias(mat2)).add_(0.25).to(device);
}

// --- Everything else: PyTorch's CPU fallback copies the inputs to the CPU, runs the CPU kernel
// and copies results and mutated inputs back.

void foreign_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  // Views must alias the device tensor; through the fallback they would be copies.
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("resize_", resize);
  // Storage swaps (torch.load, Tensor.set_, storage sharing) keep the foreign storage as it is.
  m.impl("set_.source_Storage", at::native::set_);
  m.impl("set_.source_Storage_storage_offset", at::native::set_storage_cpu_);
  m.impl("set_.source_Tensor", at::native::set_tensor_);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);

  m.impl("add.Tensor", add);
  m.impl("mul.Tensor", mul);
  m.impl("mm", mm);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&foreign_cpu_fallback>());
}

}  // namespace foreign
