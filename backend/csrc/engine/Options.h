#pragma once

#include "runtime/Config.h"

namespace neuronsim::engine {

// The engine's modes: initialised from NEURONSIM_* (runtime/Config), changeable at run time
// (torch_neuronsim.set_fallback_mode(...), ...) so one process can try each.
FallbackMode fallback_mode();
Wide64Mode wide64_mode();
MatmulMode matmul_mode();
void set_fallback_mode(FallbackMode mode);
void set_wide64_mode(Wide64Mode mode);
void set_matmul_mode(MatmulMode mode);
// The emulated compiler's latency (NEURONSIM_COMPILE_LATENCY), and the seconds a compile of
// `ops` ops was made to take: it sleeps that long, as the calling thread would wait for
// neuronx-cc.
CompileLatency compile_latency();
void set_compile_latency(CompileLatency latency);
double emulate_compile(long long ops);

}  // namespace neuronsim::engine
