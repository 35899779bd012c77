// Host-only kernels: registered for the device, computed on the host, as the ops TorchNeuron's
// op table calls "Host-only": the kernel copies its device inputs to the host through the
// dispatcher (as a device runtime moves them), runs the CPU's kernel there and copies the
// results back. Chosen among ops the device lacks (binary searches); their out= overloads stay
// with the CPU fallback. The harness sees the copies inside a registered kernel and counts the
// op `host_only`, neither native nor fallback (docs/backends.md).
#include "aten/HostOnly.h"

#include "engine/Arguments.h"
#include "engine/CallKey.h"
#include "engine/DeviceCheck.h"
#include "engine/Tracking.h"

#include <ATen/core/stack.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace neuronsim {
namespace {

constexpr const char* kHostOnlyOps[] = {"searchsorted.Tensor", "searchsorted.Scalar",
                                        "bucketize.Tensor", "bucketize.Scalar"};

void run_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto num_args = op.schema().arguments().size();
  const auto first = stack->size() - num_args;
  // Operands on two devices are refused here as by every kernel of the device (found by the
  // fuzz suite's cpu_operand transform: copying each to the host would have hidden them).
  engine::check_same_device(op, torch::jit::last(*stack, num_args));
  std::optional<c10::Device> device;
  for (std::size_t i = first; i < stack->size(); ++i) {
    engine::map_tensors((*stack)[i], [&](const at::Tensor& t) {
      if (!engine::on_device(t)) return t;
      if (!device) device = t.device();
      return t.cpu();  // aten::_to_copy: waits for the device, copies to the host
    });
  }
  TORCH_CHECK(device.has_value(), engine::overload_name(op),
              " reached a host-only kernel without a neuron tensor");
  const c10::DeviceGuard guard(*device);
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  for (std::size_t i = stack->size() - op.schema().returns().size(); i < stack->size(); ++i) {
    engine::map_tensors((*stack)[i], [&](const at::Tensor& t) { return t.to(*device); });
  }
  engine::record_native(op);  // the backend's kernel; where it computed is the harness's to see
}

}  // namespace

std::vector<std::string> host_only_ops() {
  std::vector<std::string> names;
  for (const char* name : kHostOnlyOps) names.push_back(std::string("aten::") + name);
  return names;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : kHostOnlyOps) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&run_on_host>());
  }
}

}  // namespace neuronsim
