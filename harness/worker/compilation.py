"""torch.compile as the suites observe it (the compile suite, hf's compiled_forward, check-model
--compile): the backend under test counted, Dynamo's graph breaks, and a compile failure classified
by stage."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

from evidence import exception_evidence

import backend_contract

# What the dispatcher capture cannot see into: the executable a Dynamo backend builds.
UNSEEN = "a graph compiled by the Dynamo backend (what runs inside its executable is not dispatched)"

_chosen: str | None = None  # the Dynamo backend under test: choose()


def choose(option: str | None) -> str | None:
    """The Dynamo backend the compile checks use: `option` (--suite-option dynamo_backend=NAME)
    when given, else the one the backend declares (backend_contract); None when there is neither.
    ValueError when the backend declares several and no option picks one."""
    global _chosen
    if option:
        _chosen = option
        return _chosen
    declared = backend_contract.current().dynamo_backends
    if len(declared) > 1:
        raise ValueError(f"the backend declares several Dynamo backends ({', '.join(declared)}): "
                         f"pick one with --suite-option dynamo_backend=NAME")
    _chosen = declared[0] if declared else None
    return _chosen


def _skip_guard_latency_probe() -> None:
    """Dynamo times each new set of guards once, after evicting the CPU's caches, for a log
    metric only (guard_latency_us): 26 ms a compilation here, a quarter of a one-op graph's, and
    the suites compile tens of thousands. The guards are still built and checked as before."""
    import torch._dynamo.guards as guards

    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = lambda *args, **kwargs: 0.0


def missing_backend() -> str | None:
    """Why the compile checks cannot run (no Dynamo backend declared or chosen, or none registered
    under the chosen name), or None. Loads the backend when it is there: run in the zygote, this
    spares each forked worker the import."""
    import torch._dynamo

    _skip_guard_latency_probe()

    name = _chosen if _chosen is not None else choose(None)
    if name is None:
        return (f"the backend {backend_contract.current().module_name} declares no Dynamo backend (entry point "
                f"group {backend_contract.DYNAMO_GROUP} in its package) and none was chosen: give "
                f"--suite-option dynamo_backend=NAME")
    if name in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.lookup_backend(name)
        return None
    return (f"no Dynamo backend named '{name}' is registered (entry point group {backend_contract.DYNAMO_GROUP}, "
            f"or torch._dynamo.register_backend(name='{name}'))")


def chosen() -> str:
    """The Dynamo backend's name (after missing_backend() said None)."""
    assert _chosen is not None, "compilation.missing_backend() first"
    return _chosen


class CountedBackend:
    """The Dynamo backend under test, counting the graphs Dynamo hands it and the seconds it takes."""

    def __init__(self) -> None:
        import torch._dynamo

        self.backend = torch._dynamo.lookup_backend(chosen())
        self.graphs = 0
        self.ops = 0  # the graphs' calls (call_function nodes): what a compiler's latency grows with
        self.seconds = 0.0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        self.graphs += 1
        self.ops += sum(1 for node in gm.graph.nodes if node.op == "call_function")
        started = time.perf_counter()
        try:
            return self.backend(gm, example_inputs)
        finally:
            self.seconds += time.perf_counter() - started


def reset() -> None:
    """Forget every compiled graph and Dynamo's counters: the next call compiles afresh."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()


def graph_breaks() -> list[str]:
    """The reasons Dynamo broke graphs since reset(), most frequent first."""
    from torch._dynamo.utils import counters

    return [reason for reason, _ in counters["graph_break"].most_common()]


def failure(exc: BaseException) -> dict[str, Any]:
    """A compile or run failure's evidence, with its stage: `capture` (Dynamo could not capture
    one graph: the reason), `lowering` (the backend could not compile a graph: the op it names),
    or `execute` (the compiled code raised)."""
    import torch._dynamo.exc as dynamo_exc

    # A backward graph is compiled when autograd first reaches it, outside Dynamo: the backend's
    # own compile error then arrives unwrapped.
    wrapped = isinstance(exc, dynamo_exc.BackendCompilerFailed)
    if wrapped or "CompileError" in type(exc).__name__:
        inner = (getattr(exc, "inner_exception", None) or exc.__cause__ or exc) if wrapped else exc
        evidence = {**exception_evidence(inner), "stage": "lowering"}
        if getattr(inner, "op", None):
            evidence["failing_op"] = inner.op
        return evidence
    if isinstance(exc, dynamo_exc.Unsupported):
        evidence = {**exception_evidence(exc), "stage": "capture", "graph_breaks": [break_reason(exc)]}
        evidence.pop("failing_op", None)
        return evidence
    return {**exception_evidence(exc), "stage": "execute"}


def break_reason(exc: BaseException) -> str:
    """Dynamo's reason for a graph break in one line: its headline and its explanation."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    explanation = next((line.removeprefix("Explanation:").strip() for line in lines
                        if line.startswith("Explanation:")), "")
    return (lines[0] + (f": {explanation}" if explanation else ""))[:300] if lines else type(exc).__name__


def backend_stats(backend: Any) -> dict[str, float]:
    """The backend's compile_stats() (TorchNeuron's name), or {} when it has none."""
    stats = getattr(backend, "compile_stats", None)
    return dict(stats()) if callable(stats) else {}


def stats_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float] | str:
    """What changed in compile_stats() between two readings; "unavailable" without them."""
    if not after:
        return "unavailable"
    delta = {k: after[k] - before.get(k, 0) for k in after}
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in delta.items() if v}


@dataclass
class CompiledRun:
    """What run_compiled() saw: `run`'s result (None when it raised), the failure's evidence
    (failure(): None when it ran), and `cost`, recorded under these names by hf's compiled_forward
    and check-model --compile: graphs, graph_breaks, compile_seconds, backend_compile_stats."""

    output: Any
    failure: dict[str, Any] | None
    cost: dict[str, Any]


def run_compiled(model: torch.nn.Module, run: Callable[[Callable[..., Any]], Any], backend: Any) -> CompiledRun:
    """`run(compiled)` once, `compiled` being `model` under torch.compile with the Dynamo backend under
    test (static shapes, graph breaks allowed), Dynamo reset first so that every graph counted is this
    run's. An exception of `run` is caught and classified (failure()); `backend` is the backend's
    module, whose compile_stats() are read before and after."""
    reset()
    counted = CountedBackend()
    before = backend_stats(backend)
    compiled = torch.compile(model, backend=counted, dynamic=False)
    output, failed = None, None
    try:
        output = run(compiled)
    except Exception as exc:
        failed = failure(exc)
    return CompiledRun(output, failed, {"graphs": counted.graphs, "graph_ops": counted.ops,
                                        "graph_breaks": graph_breaks(),
                                        "compile_seconds": counted.seconds,
                                        "backend_compile_stats": stats_delta(before, backend_stats(backend))})
