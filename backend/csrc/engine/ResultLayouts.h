#pragma once

#include "engine/Executable.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <vector>

namespace neuronsim::engine {

// The layouts of an op's results for one signature, learnt at compile time from the op's Meta
// kernel (run on meta stand-ins of the device tensors): what lets the engine queue the op and
// hand its results out before it runs. None, and the op runs at its call, when there is no Meta
// kernel for the call, when the op draws random numbers (they are drawn in call order, from the
// device's generator), takes a device (its kernel makes the result there, by device ops of its
// own), returns anything but tensors, takes a CPU tensor other than a 0-dim
// scalar, resizes a written argument (an out= of the wrong size), or when the CPU kernel, run
// once on zeros of the call's geometry as `plan` binds them, refuses the call or disagrees.
std::optional<std::vector<ResultLayout>> result_layouts(const c10::OperatorHandle& op,
                                                        c10::ArrayRef<c10::IValue> args,
                                                        const Executable& plan);

}  // namespace neuronsim::engine
