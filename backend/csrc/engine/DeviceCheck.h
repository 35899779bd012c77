#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace neuronsim::engine {

// Refuses an op whose tensor arguments live on more than one device, as CUDA refuses it
// ("Expected all tensors to be on the same device"): a kernel that read a CPU operand or one
// on another neuron device would hand back a device result PyTorch never gives. Allowed, as CUDA
// allows them: a CPU tensor of zero dimensions (a scalar) that the op reads, and CPU index tensors (index,
// index_put_, whose indices are moved; tensor_split's indices, which must be on the CPU).
void check_same_device(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args);

}  // namespace neuronsim::engine
