"""--compile: the tiny model compiled with the backend's Dynamo backend, against the CPU's eager
result; the graphs, graph breaks and their reasons, a compile failure (its stage and op) and what
compiling cost (compilation.run_compiled, as hf's compiled_forward check records it)."""

from __future__ import annotations

from typing import Any

from vocabulary import Outcome

from .calls import call, first_tensor
from .fatal import Fatal
from .placement import placed


def compile_check(rebuild_tiny, backend, device: str) -> dict[str, Any]:
    """Compiles the tiny model's forward with the backend's Dynamo backend (static shapes, graph
    breaks allowed) and runs it against the CPU's eager result: does it compile into one graph?
    With the backend's declared compile latency, what compiling its graphs costs on the device."""
    import torch

    import compilation
    from case_context import declared_compile_latency, estimated_seconds
    from comparison import errors

    if missing := compilation.missing_backend():
        raise Fatal(f"--compile: {missing}")
    device_model, device_inputs, model, inputs, _ = placed(rebuild_tiny, device, None)

    # The CPU's forward runs inside the compiled run: a model that fails even there is reported
    # as the compile check's failure, like the device's.
    def distance_from_cpu(compiled) -> float:
        expected = call(model, inputs)
        return errors(first_tensor(call(compiled, device_inputs)), first_tensor(expected))[0]

    with torch.no_grad():
        run = compilation.run_compiled(device_model, distance_from_cpu, backend)
    if run.failure is None:
        result: dict[str, Any] = {"max_abs_error": run.output, "outcome": "compiled"}
    else:
        result = {**run.failure, "message": run.failure["message"][:1000], "outcome": Outcome.ERROR}
    # a capture failure's own graph_breaks (its reason) stand
    result.update({field: value for field, value in run.cost.items() if field not in result})
    if declared := declared_compile_latency(backend):
        seconds = estimated_seconds(run.cost["graphs"], run.cost["graph_ops"], declared)
        result["compile_estimate"] = {**declared, "seconds": seconds}
    return result
