#pragma once

#include "engine/Executable.h"

#include <ATen/core/dispatch/Dispatcher.h>

namespace neuronsim::engine {

// Adaptive-eager fusion, as TorchNeuron concatenates runs of consecutive eager ops into one
// executable: a queued op may join its stream's open chain when it is pointwise (ATen's
// `pointwise` tag) and the plan queues it. Views feeding it never reach the queue (they are
// metadata, made at the call), so a chain spans them as the device's folds them into its
// prologue. Each op of a chain still runs its own kernel, in order, so the results are the
// unfused ops' by construction (the numerics AWS promises); what fusion changes is what is
// compiled and counted: one compile-cache entry per chain, keyed by its ops' signatures and
// compiled at the emulated latency of an executable of that many ops.
// Never inside a compiled graph's run (set_in_compiled_graph): its ops are one executable already.
bool fusible(const c10::OperatorHandle& op, const Executable& plan);

// Marks the calling thread as running a torch.compile graph's ops; returns the previous mark.
bool set_in_compiled_graph(bool inside);

}  // namespace neuronsim::engine
