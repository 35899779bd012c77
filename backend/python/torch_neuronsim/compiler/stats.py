"""compile_stats(): what the Dynamo backend did in this process since the last reset."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class CompileStats:
    graphs_compiled: int = 0  # graphs the backend was given (forward and backward each count)
    lowered: int = 0  # graphs lowered through torch-mlir (cache misses)
    memory_hits: int = 0  # graphs whose StableHLO was already in this process
    disk_hits: int = 0  # graphs whose StableHLO was in the on-disk cache
    disk_rejected: int = 0  # on-disk entries found corrupt or of another format, and recompiled
    lowering_failures: int = 0  # graphs torch-mlir could not lower (a compile error)
    refusals_cached: int = 0  # of which the cache held torch-mlir's refusal (not lowered again)
    dynamic_refused: int = 0  # graphs refused for symbolic shapes
    claims_waited: int = 0  # graphs another process was compiling: waited for, not lowered here
    claims_broken: int = 0  # claims of a dead or expired compiling process removed
    compile_seconds: float = 0.0  # time inside the backend (AOTAutograd, lowering, cache)
    lowering_seconds: float = 0.0  # of which lowering through torch-mlir, the emulated compile included
    emulated_compile_seconds: float = 0.0  # of which the emulated neuronx-cc latency (NEURONSIM_COMPILE_LATENCY)


STATS = CompileStats()


def compile_stats() -> dict[str, float]:
    return asdict(STATS)


def reset_compile_stats() -> None:
    for name, value in asdict(CompileStats()).items():
        setattr(STATS, name, value)
