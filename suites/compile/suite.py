"""The compile suite: every OpInfo of the installed torch's op_db, at every dtype the op supports
on the CPU, compiled with torch.compile(backend=<the Dynamo backend>, fullgraph=True, dynamic=False) on the
device and compared with the CPU's eager result, as TorchNeuron's compile path is used.

Case ids: compile/<subject>/<dtype>/<check>, subject = OpInfo name plus ".variant_test_name"
(as in the ops suite, whose samples, tolerances and comparison this suite shares). Checks:
  forward    the op's first MAX_SAMPLES sample inputs (op.sample_inputs), each compiled on its
             own (torch._dynamo.reset() first: one static shape, one compilation) and compared
             with the CPU's eager result
  backward   (OpInfos with autograd at dtypes with backward support) gradients of every input
             through the compiled graph: the forward compiled as above, AOTAutograd's backward
             graph compiled by the backend when autograd reaches it
  recompile  (at one dtype per OpInfo: float32, or its first) two sample inputs that differ only in shape: the first call compiles, a repeat of
             its shape must not compile again, the second shape must compile exactly once more
             (static shapes); both results compared with the CPU. Without two such samples the
             check has nothing to run (pass, `not_applicable`)
Outcomes: pass / fallback (an aten op of the compiled graph ran through the CPU fallback); fail
(values differ, or a recompile count is wrong); error with `stage`: `capture` (Dynamo could
not capture one graph: the break's reason), `lowering` (the backend could not compile the graph:
`failing_op` names the op torch-mlir could not lower), `execute` (the compiled graph raised).
Evidence: graphs compiled, compile seconds, graph breaks, recompiles, the backend's cache hits
and lowering seconds (compile_stats(), when it has them), tolerance, errors.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable

import torch
import torch.utils._pytree as pytree

import compilation
from evidence import dtype_name
from sides import NoReference, Verdict, seed
import suite_api
from suitelib.public_api import opinfo_api
from vocabulary import Outcome

from suitelib import opinfo
from suitelib.opinfo import calls, judge, samples

MAX_SAMPLES = 3  # sample inputs per case: each one is a compilation of its own


def _call_seeded_outside(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """Stands in for torch.testing's wrapper_set_seed, through which the OpInfos of random ops
    (bernoulli, dropout, normal, ...) call their op: it seeds inside the call, a torch.manual_seed
    Dynamo cannot capture, so every such OpInfo would be a graph break of the harness's making.
    Both sides are seeded before the call instead (Compilation.on_device and Sides.cpu), so the
    compiled op and the CPU draw the same numbers."""
    return op(*args, **kwargs)


def _seed_random_ops_outside_the_graph() -> None:
    from torch.testing._utils import wrapper_set_seed

    opinfo.by_subject()  # op_db's modules imported first: each holds wrapper_set_seed under its own name
    for module in list(sys.modules.values()):
        if getattr(module, "wrapper_set_seed", None) is wrapper_set_seed:
            module.wrapper_set_seed = _call_seeded_outside


_seed_random_ops_outside_the_graph()


class Compilation(judge.Case):
    """One case: the ops suite's comparison, with the op compiled on the device side."""

    def __init__(self, op, dtype: torch.dtype, ctx) -> None:
        super().__init__(op, dtype, ctx)
        self.counted = compilation.CountedBackend()
        self.stats_before = compilation.backend_stats(ctx.backend)
        self.timings: dict[str, float] = {"first_call_seconds": 0.0, "execute_seconds": 0.0}

    def compiled(self) -> Callable:
        """A fresh compilation of the op (Dynamo's caches reset): call it like the op."""
        compilation.reset()
        self.ctx.unobservable(compilation.UNSEEN)
        op = self.op

        def call(*args: Any, **kwargs: Any) -> Any:
            return op(*args, **kwargs)

        return torch.compile(call, backend=self.counted, fullgraph=True, dynamic=False)

    def on_device(self, run: Callable[[Any], Any], sample, where: dict[str, Any]) -> Any:
        """`run(sample on the device)`; an exception is an `error` Verdict classified by stage
        (compilation.failure: graph_break, lowering, execute)."""
        try:
            seed(self.ctx.seed)
            result = run(samples.on_device(sample, self.ctx.device, self.op))
            self.ctx.synchronize()  # an error the device raises late is this call's
            return result
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**compilation.failure(exc), **where,
                                          "sample": samples.describe(sample)}) from exc

    def conclude(self) -> tuple[str, dict[str, Any]]:
        return self._finish(*super().conclude())

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        return self._finish(*super().failed(verdict))

    def _finish(self, outcome: str, evidence: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The outcome and evidence with what the compilations took: graphs, seconds, the backend's stats."""
        evidence.update({k: round(v, 4) for k, v in self.timings.items() if v})
        evidence.update(graphs=self.counted.graphs, compile_seconds=round(self.counted.seconds, 4),
                        backend_compile_stats=compilation.stats_delta(self.stats_before,
                                                                      compilation.backend_stats(self.ctx.backend)))
        return outcome, evidence


SUITE = suite_api.Suite(
    __name__, noun="OpInfo", nouns="OpInfos",
    native_phrase="compile into one graph and match the CPU at every dtype and check",
    options={"dynamo_backend": {"type": "str", "default": None,
                                "help": "the torch.compile backend to test (default: the one the backend module "
                                        "declares, entry point group torch_dynamo_backends)"}},
    nightly={"shards": 2})
SUITE.makes_cases(judge.cases(opinfo.by_subject, kind=Compilation))


@SUITE.configures
def configure(options: dict[str, Any]) -> None:
    """Chooses the Dynamo backend (the option, else the backend's declaration) and checks that it is
    registered: ValueError, one line before any case, when there is none (exit 2)."""
    compilation.choose(options.get("dynamo_backend"))
    if reason := compilation.missing_backend():
        raise ValueError(f"the compile suite cannot run: {reason}")


def recompile_dtype(op) -> torch.dtype:
    """The one dtype the recompile check runs at (recompiling depends on shapes, not on dtypes):
    float32 when the op has it, else its first CPU dtype."""
    dtypes = op.supported_dtypes("cpu")
    return torch.float32 if torch.float32 in dtypes else sorted(dtypes, key=dtype_name)[0]


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    return opinfo.case_rows(SUITE.checks_for)


@SUITE.declares_api
def public_api() -> dict[str, Any]:
    """The public names each OpInfo tests under torch.compile (harness/worker/suitelib/public_api.py)."""
    return opinfo_api("compile", SUITE.api_checks())


def _check_samples(case: Compilation, inputs: list, run: Callable[[Any, Any], Any], timed: bool) -> None:
    """forward and backward: each of the first MAX_SAMPLES samples, `run(op, sample)` with the op
    compiled afresh on the device against the op itself on the CPU. `timed`: call the compiled op
    a second time to time the execution alone (make bench-compile)."""
    for index, sample in enumerate(inputs[:MAX_SAMPLES]):
        try:
            expected = case.cpu(lambda s: run(case.op, s), sample)
        except NoReference:
            case.without_reference += 1
            continue
        where = {"sample_index": index}
        compiled = case.compiled()
        started = time.perf_counter()
        actual = case.on_device(lambda s: run(compiled, s), sample, where)
        case.timings["first_call_seconds"] += time.perf_counter() - started
        if timed:
            started = time.perf_counter()
            case.on_device(lambda s: run(compiled, s), sample, where)
            case.timings["execute_seconds"] += time.perf_counter() - started
        case.compare(actual, expected, {**where, "sample": samples.describe(sample)})
        case.compared += 1


def _structure(sample) -> Any:
    """What must be equal for two samples to differ only in shape: the pytree structure, every
    tensor's dtype, every other value."""
    leaves, spec = pytree.tree_flatten([sample.input, sample.args, sample.kwargs])
    return str(spec), [t.dtype if isinstance(t, torch.Tensor) else repr(t) for t in leaves]


def _shapes(sample) -> list:
    return [tuple(t.shape) for t in samples.tensors(sample)]


@suite_api.check("forward", f"up to {MAX_SAMPLES} sample inputs, each compiled into one graph (fullgraph, static "
                            f"shapes) on the device, against the CPU's eager result")
def forward(case: Compilation) -> None:
    _check_samples(case, samples.generated(case.op, case.dtype, reference=False), calls.forward, timed=True)


@suite_api.check("backward", "gradients of every input through the compiled graph, against the CPU's eager gradients",
                 applies=calls.has_backward)
def backward(case: Compilation) -> None:
    _check_samples(case, samples.differentiable(case.op, case.dtype, reference=False), calls.backward, timed=False)


# tests the compiled graph's reuse across shapes (dynamic shapes), not the op's public API
@suite_api.check("recompile", "a repeated shape never recompiles, a new shape recompiles exactly once; results "
                              "compared", api=False, applies=lambda op, dtype: dtype == recompile_dtype(op))
def recompile(case: Compilation) -> None:
    inputs = samples.generated(case.op, case.dtype, reference=False)
    pair = next(((a, b) for i, a in enumerate(inputs) for b in inputs[i + 1:]
                 if _structure(a) == _structure(b) and _shapes(a) != _shapes(b)), None)
    if pair is None:
        case.vacuous = "no two sample inputs differ only in shape"
        return
    first, second = pair
    try:
        expected = [case.cpu(lambda s: calls.forward(case.op, s), s) for s in pair]
    except NoReference:
        case.without_reference += 1
        case.vacuous = f"the CPU cannot run the two samples ({case.first_cpu_error})"
        return
    compiled = case.compiled()
    counted = case.counted
    steps = [("first shape", first, 1), ("first shape again", first, 1), ("second shape", second, 2)]
    for (what, sample, graphs), reference in zip(steps, [expected[0], expected[0], expected[1]]):
        where = {"call": what, "shapes": _shapes(sample)}
        actual = case.on_device(lambda s: calls.forward(compiled, s), sample, where)
        case.compare(actual, reference, where)
        compiles = counted.graphs
        if compiles != graphs:
            raise Verdict(Outcome.FAIL, {**where, "graphs": compiles,
                                         "message": f"after the {what} call {compiles} graph(s) were compiled; "
                                                    f"static shapes need exactly {graphs}"})
        case.compared += 1
    case.evidence["recompiles"] = counted.graphs - 1

