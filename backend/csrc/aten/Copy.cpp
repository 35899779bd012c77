// Copies into, out of and between neuron devices: the `_copy_from` family that
// at::native::copy_ routes to for a PrivateUse1 tensor. Strides, storage offsets, dtype
// conversion and broadcasting come from ATen's CPU copy kernel running on CPU views.
#include "runtime/CpuView.h"
#include "runtime/Executor.h"
#include "runtime/Stream.h"

#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace neuronsim {
namespace {

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK(self.defined() && dst.defined(), "copy_ needs defined source and destination");
  if (!launch_blocking() && self.device() == dst.device()) {
    // Within one device: queued on its current stream, as any device op.
    Work work;
    work.op = "aten::_copy_from";
    work.run = [from = frozen_alias(self), to = frozen_alias(dst)] {
      cpu_view(to).copy_(cpu_view(from));
    };
    Executor::instance().enqueue(current_stream(dst.device().index()), std::move(work));
    return dst;
  }
  // To or from the host, or between devices: what is queued runs first, then the copy, at once
  // (a non_blocking copy complete on return, as allowed).
  drain(-1);
  at::Tensor dst_view = cpu_view(dst);
  dst_view.copy_(cpu_view(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  const c10::DeviceGuard guard(dst.device());
  drain(-1);  // resizing may move dst's bytes
  at::native::resize_(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

}  // namespace neuronsim

// The copies above read conj/neg bits through cpu_view and let ATen's CPU copy resolve them.
// Without these fall-throughs, the Conjugate/Negative fallbacks would materialise the source
// with clone(), which copies through _copy_from again: endless recursion, then a crash.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
