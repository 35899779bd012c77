"""The Dynamo backend "neuron": `torch.compile(model, backend="neuron")`.

The pipeline TorchNeuron uses: Dynamo captures a graph; AOTAutograd splits it into forward and
backward graphs of core ATen ops (core_aten_decompositions); torch-mlir lowers each to StableHLO,
the compiled artifact, cached in memory and on disk (graph_cache.py). The device is emulated, so
the StableHLO module is not executed: the lowered ATen graph runs with the eager engine's device
kernels, dtype rules and fallback mode (after passes.py's rewrites, which it was lowered with). Shapes are static, as on Trainium: symbolic shapes
(`dynamic=True`, `mark_dynamic`) are refused, automatic dynamic shapes are turned off on the
backend's first use, and a new input shape is a recompile.

compile_stats() counts graphs, cache hits, lowering failures (refusals_cached: of which the cache
held torch-mlir's refusal) and seconds; NEURONSIM_DUMP_DIR
receives each graph's StableHLO for debugging.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

from .. import _C
from . import device_interface, graph_cache, passes
from .lowering import CompileError, lower
from .stats import STATS

device_interface.register()
_static_shapes_set = False


def _refuse_symbolic_shapes(example_inputs: list[Any]) -> None:
    for index, value in enumerate(example_inputs):
        symbolic = isinstance(value, torch.SymInt) or (
            isinstance(value, torch.Tensor)
            and any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride())))
        if symbolic:
            STATS.dynamic_refused += 1
            raise CompileError(
                f"neuron compiles static shapes only, and graph input {index} has a symbolic shape "
                f"({tuple(value.shape) if isinstance(value, torch.Tensor) else value}): compile with dynamic=False "
                f"and without torch._dynamo.mark_dynamic; each new shape is then a recompile")


def _turn_off_automatic_dynamic_shapes() -> None:
    """Dynamo would make a dimension symbolic after it saw two sizes of it; neuron recompiles instead."""
    global _static_shapes_set
    if _static_shapes_set:
        return
    _static_shapes_set = True
    import torch._dynamo.config as config

    if config.automatic_dynamic_shapes:
        config.automatic_dynamic_shapes = False
        warnings.warn("torch_neuronsim: torch._dynamo.config.automatic_dynamic_shapes turned off: the neuron backend "
                      "compiles static shapes only, so a new input shape is a recompile")


def _dump(cache_key: str, stablehlo: str) -> None:
    directory = os.environ.get("NEURONSIM_DUMP_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / f"{cache_key[:16]}.stablehlo.mlir").write_text(stablehlo)


def _as_one_executable(forward: Callable) -> Callable:
    """The graph's ops run as the one executable compiled for it: queued eagerly, but never
    fused again into chains of their own (which would compile, and count, a second time)."""

    def run(*args: Any) -> Any:
        previous = _C._set_in_compiled_graph(True)
        try:
            return forward(*args)
        finally:
            _C._set_in_compiled_graph(previous)

    return run


def _cached(cache_key: str) -> graph_cache.Artifact | None:
    """The graph's StableHLO or refusal from the cache, counted by where it was found."""
    artifact, where = graph_cache.lookup(cache_key)
    if where == "memory":
        STATS.memory_hits += 1
    elif where == "disk":
        STATS.disk_hits += 1
    elif where == "rejected":
        STATS.disk_rejected += 1
    return artifact


def _lower(gm: torch.fx.GraphModule, kind: str, cache_key: str) -> str:
    """Lowers the graph through torch-mlir and publishes the StableHLO, or its refusal (raised)."""
    started = time.perf_counter()
    try:
        artifact = lower(gm, f"{kind}_{cache_key[:12]}")
    except CompileError as refusal:
        STATS.lowering_failures += 1
        graph_cache.store(cache_key, graph_cache.Refusal(str(refusal), refusal.op))
        raise
    finally:
        # the emulated compiler's time for the graph's ops (NEURONSIM_COMPILE_LATENCY), a
        # refusal included: neuronx-cc takes its time before it fails
        ops = sum(1 for node in gm.graph.nodes if node.op == "call_function")
        STATS.emulated_compile_seconds += _C._emulate_compile(ops)
        STATS.lowering_seconds += time.perf_counter() - started
    STATS.lowered += 1
    graph_cache.store(cache_key, artifact)
    return artifact


def _compiler(kind: str) -> Callable:
    """AOTAutograd's forward or backward compiler: the graph's StableHLO from the cache or from
    torch-mlir; what runs is the ATen graph itself, on the device's kernels."""
    from functorch.compile import make_boxed_func
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        # AOTAutograd may call this with its FakeTensorMode still active; the graph's constants
        # (hashed into the key, copied for lowering) are real tensors.
        with unset_fake_temporarily():
            return compile_real(gm, example_inputs)

    def compile_real(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        _refuse_symbolic_shapes(example_inputs)
        STATS.graphs_compiled += 1
        passes.legalize(gm)
        cache_key = graph_cache.key(gm, example_inputs, kind)
        artifact = _cached(cache_key)
        if artifact is None:
            # Processes (and hosts) sharing the cache compile a graph once: the others wait for
            # the claim's holder to publish it.
            with graph_cache.claim(cache_key) as claim:
                STATS.claims_waited += claim.waited
                STATS.claims_broken += claim.broken
                if not claim.compile:
                    artifact = _cached(cache_key)
                if artifact is None:
                    artifact = _lower(gm, kind, cache_key)
        if isinstance(artifact, graph_cache.Refusal):
            STATS.lowering_failures += 1
            STATS.refusals_cached += 1
            raise CompileError(artifact.message, artifact.op)
        stablehlo = artifact
        _dump(cache_key, stablehlo)
        return make_boxed_func(_as_one_executable(gm.forward))

    return compile_graph


@functools.lru_cache(maxsize=None)
def _decompositions() -> dict[Any, Callable]:
    """Core ATen's decompositions, as a plain table built once: core_aten_decompositions() is a
    lazy table that AOTAutograd's len() materializes on every compilation, by a scan of every
    CompositeImplicitAutograd op of every namespace (a third of a small graph's compile time)."""
    from torch._decomp import core_aten_decompositions

    return dict(core_aten_decompositions().items())


def neuron_backend(gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
    """The Dynamo backend named "neuron" (entry point group torch_dynamo_backends)."""
    from torch._dynamo.backends.common import aot_autograd

    started = time.perf_counter()
    _turn_off_automatic_dynamic_shapes()
    _refuse_symbolic_shapes(example_inputs)
    try:
        compiled = aot_autograd(fw_compiler=_compiler("forward"), bw_compiler=_compiler("backward"),
                                decompositions=_decompositions(), keep_inference_input_mutations=True)(
            gm, example_inputs, **kwargs)
    finally:
        STATS.compile_seconds += time.perf_counter() - started
    return compiled
