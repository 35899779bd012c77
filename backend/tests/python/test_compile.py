"""torch.compile(backend="neuron"): the backend TorchNeuron's compile path has (Dynamo,
AOTAutograd, torch-mlir to StableHLO, the compiled artifact cached), on the emulated device."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch._dynamo
import torch_neuronsim


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    torch_neuronsim.reset_compile_stats()
    yield
    torch._dynamo.reset()


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))


def test_an_mlp_compiles_forward_and_backward_and_matches_the_cpu():
    cpu = _mlp()
    device = copy.deepcopy(cpu).to("neuron")
    compiled = torch.compile(device, backend="neuron", fullgraph=True, dynamic=False)
    x = torch.randn(5, 8)
    out = compiled(x.to("neuron"))
    out.pow(2).sum().backward()
    expected = cpu(x)
    expected.pow(2).sum().backward()
    assert out.device.type == "neuron"
    torch.testing.assert_close(out.cpu(), expected)
    for (name, p), q in zip(device.named_parameters(), cpu.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, msg=name)
    stats = torch_neuronsim.compile_stats()
    assert stats["graphs_compiled"] == 2  # AOTAutograd's forward and backward graphs
    assert stats["lowering_failures"] == 0 and stats["lowering_seconds"] > 0


def test_a_new_shape_recompiles_once_and_a_repeated_one_never():
    compiled = torch.compile(lambda a: torch.relu(a) * 2, backend="neuron", fullgraph=True, dynamic=False)
    compiled(torch.randn(3, 4, device="neuron"))
    compiled(torch.randn(3, 4, device="neuron"))
    assert torch_neuronsim.compile_stats()["graphs_compiled"] == 1
    compiled(torch.randn(5, 4, device="neuron"))
    compiled(torch.randn(5, 4, device="neuron"))
    assert torch_neuronsim.compile_stats()["graphs_compiled"] == 2
    compiled(torch.randn(7, 4, device="neuron"))  # no automatic dynamic shapes: static again
    assert torch_neuronsim.compile_stats()["graphs_compiled"] == 3
    assert torch_neuronsim.compile_stats()["dynamic_refused"] == 0


def test_scalar_tensors_from_decompositions_are_legalized_before_lowering():
    # masked_fill decomposes into where(mask, scalar_tensor(v), x): torch-mlir cannot lower
    # scalar_tensor, so the backend rewrites it into full([], v) (compiler/passes.py)
    x = torch.randn(6)
    compiled = torch.compile(lambda a: a.masked_fill(a > 0, -1.5), backend="neuron", fullgraph=True)
    torch.testing.assert_close(compiled(x.to("neuron")).cpu(), x.masked_fill(x > 0, -1.5))
    assert torch_neuronsim.compile_stats()["lowering_failures"] == 0


def test_squeezing_several_dims_at_once_is_legalized_before_lowering():
    # torch-mlir has no lowering for aten.squeeze.dims: one squeeze.dim per dim instead
    x = torch.randn(1, 3, 1, 2, 1)
    compiled = torch.compile(lambda a: torch.squeeze(a * 2, (0, -1, 2)), backend="neuron", fullgraph=True)
    torch.testing.assert_close(compiled(x.to("neuron")).cpu(), torch.squeeze(x * 2, (0, -1, 2)))
    assert torch_neuronsim.compile_stats()["lowering_failures"] == 0


def test_symbolic_shapes_are_refused_with_a_clear_message():
    with pytest.raises(Exception, match="neuron compiles static shapes only"):
        torch.compile(lambda a: a.sum(), backend="neuron", dynamic=True)(torch.ones(3, device="neuron"))
    assert torch_neuronsim.compile_stats()["dynamic_refused"] == 1


def test_an_op_torch_mlir_cannot_lower_is_a_compile_error_naming_it():
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="aten::lgamma cannot be lowered to StableHLO"):
        torch.compile(lambda a: torch.lgamma(a) + 1, backend="neuron", fullgraph=True)(torch.rand(4, device="neuron"))
    assert torch_neuronsim.compile_stats()["lowering_failures"] == 1


def test_lowerings_that_share_a_context_match_a_fresh_context_across_failures_and_renewals(monkeypatch):
    # Lowerings share one MLIR context, renewed every few; neither a graph torch-mlir refused nor
    # a renewal changes what the next graph lowers to, and each refusal names its own op.
    from torch_neuronsim.compiler import lowering

    traced = {}
    for name, fn in {"sin": lambda a: a.sin() * 2, "lgamma": lambda a: torch.lgamma(a) + 1,
                     "matmul": lambda a: (a @ a.t()).relu(), "digamma": lambda a: torch.digamma(a)}.items():
        traced[name] = torch.fx.experimental.proxy_tensor.make_fx(fn)(torch.rand(4, 4))
    fresh = {}
    for name in ("sin", "matmul"):
        monkeypatch.setattr(lowering, "_shared", lowering._SharedContext())
        fresh[name] = lowering.lower(traced[name], name)
    monkeypatch.setattr(lowering, "_LOWERINGS_PER_CONTEXT", 3)
    monkeypatch.setattr(lowering, "_shared", lowering._SharedContext())
    for _ in range(3):
        for name in ("sin", "lgamma", "matmul", "digamma"):
            if name in fresh:
                assert lowering.lower(traced[name], name) == fresh[name]
            else:
                with pytest.raises(lowering.CompileError) as refused:
                    lowering.lower(traced[name], name)
                assert refused.value.op == f"aten::{name}"


def test_a_forked_child_lowers_in_a_context_of_its_own():
    # The worker zygote forks: a context made before the fork (its thread pool's threads stay in
    # the parent) must not serve the child.
    from torch_neuronsim.compiler import lowering

    graph = torch.fx.experimental.proxy_tensor.make_fx(lambda a: (a @ a.t()).tanh())(torch.rand(3, 3))
    expected = lowering.lower(graph, "forked")
    parent_context = lowering._shared._context
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave without running the parent's exit handlers
        try:
            same = lowering.lower(graph, "forked") == expected and lowering._shared._context is not parent_context
            os.write(write, b"ok" if same else b"differs")
        finally:
            os._exit(0)
    os.close(write)
    assert os.waitpid(pid, 0)[1] == 0
    assert os.read(read, 16) == b"ok"
    assert lowering._shared._context is parent_context


def test_a_data_dependent_shape_is_a_compile_error_naming_the_op():
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="aten::nonzero has a data-dependent output"):
        torch.compile(lambda a: torch.nonzero(a), backend="neuron", fullgraph=True)(torch.rand(4, device="neuron"))


_CHILD = """
import json, torch, torch_neuronsim
f = torch.compile(lambda a: torch.tanh(a) @ a.t(), backend="neuron", fullgraph=True)
f(torch.ones(4, 4, device="neuron"))
print(json.dumps(torch_neuronsim.compile_stats()))
"""


_REFUSED_CHILD = """
import json, torch, torch_neuronsim
try:
    torch.compile(lambda a: torch.lgamma(a) + 1, backend="neuron", fullgraph=True)(torch.rand(4, device="neuron"))
    error = None
except Exception as exc:
    error = str(exc)
print(json.dumps({**torch_neuronsim.compile_stats(), "error": error}))
"""


def _compile_in_a_new_process(cache: Path, dump: Path | None = None, child: str = _CHILD) -> tuple[dict, str]:
    env = dict(os.environ, NEURONSIM_CACHE_DIR=str(cache))
    if dump is not None:
        env["NEURONSIM_DUMP_DIR"] = str(dump)
    done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_the_disk_cache_serves_a_second_process_and_a_corrupt_entry_is_recompiled(tmp_path):
    first, _ = _compile_in_a_new_process(tmp_path / "cache", dump=tmp_path / "dump")
    assert first["lowered"] == 1 and first["disk_hits"] == 0
    (dumped,) = (tmp_path / "dump").glob("*.stablehlo.mlir")
    assert "stablehlo." in dumped.read_text()  # the module is StableHLO
    second, _ = _compile_in_a_new_process(tmp_path / "cache")
    assert second["lowered"] == 0 and second["disk_hits"] == 1 and second["lowering_seconds"] == 0
    (entry,) = (tmp_path / "cache" / "graphs").glob("*.stablehlo")
    entry.write_text(entry.read_text().replace("stablehlo.", "stablehlo_", 1))  # same length, wrong checksum
    third, stderr = _compile_in_a_new_process(tmp_path / "cache")
    assert third["disk_rejected"] == 1 and third["lowered"] == 1
    assert "is corrupt or of another format; recompiling it" in stderr


def test_a_refusal_is_kept_on_disk_and_refused_again_without_lowering_and_a_corrupt_one_is_relowered(tmp_path):
    # As Neuron's compile cache keeps a failed compilation: the second process gets the same
    # error, naming the same op, without lowering the graph again.
    first, _ = _compile_in_a_new_process(tmp_path / "cache", child=_REFUSED_CHILD)
    assert first["lowering_failures"] == 1 and first["refusals_cached"] == 0 and first["lowering_seconds"] > 0
    assert "aten::lgamma cannot be lowered to StableHLO" in first["error"]
    second, _ = _compile_in_a_new_process(tmp_path / "cache", child=_REFUSED_CHILD)
    assert second["lowering_failures"] == 1 and second["refusals_cached"] == 1 and second["disk_hits"] == 1
    assert second["lowering_seconds"] == 0 and second["lowered"] == 0
    assert "aten::lgamma cannot be lowered to StableHLO" in second["error"]
    (entry,) = (tmp_path / "cache" / "graphs").glob("*.stablehlo")
    entry.write_text(entry.read_text() + "module {}")  # a refusal with a body: not trusted
    third, stderr = _compile_in_a_new_process(tmp_path / "cache", child=_REFUSED_CHILD)
    assert third["disk_rejected"] == 1 and third["refusals_cached"] == 0 and third["lowering_seconds"] > 0
    assert "aten::lgamma cannot be lowered to StableHLO" in third["error"]
    assert "is corrupt or of another format; recompiling it" in stderr


def test_running_out_of_memory_while_lowering_is_not_kept_as_a_refusal(monkeypatch):
    from torch_neuronsim.compiler import graph_cache, lowering

    def exhausted(*args, **kwargs):
        raise MemoryError("planted: out of memory while lowering")

    f = lambda a: a.cos() * 3 + 1  # noqa: E731
    x = torch.rand(3, 5, device="neuron")
    monkeypatch.setattr(graph_cache, "_directory", lambda: None)  # nothing from an earlier test's disk cache
    graph_cache.clear_memory()
    with monkeypatch.context() as patched:
        patched.setattr(lowering, "_module_lowering", exhausted)
        with pytest.raises(Exception, match="planted: out of memory") as raised:
            torch.compile(f, backend="neuron", fullgraph=True, dynamic=False)(x)
        assert not isinstance(raised.value, lowering.CompileError)
    torch._dynamo.reset()
    torch_neuronsim.reset_compile_stats()
    torch.testing.assert_close(torch.compile(f, backend="neuron", fullgraph=True, dynamic=False)(x).cpu(), f(x.cpu()))
    stats = torch_neuronsim.compile_stats()
    assert stats["lowered"] == 1 and stats["lowering_failures"] == 0 and stats["refusals_cached"] == 0


GRAPH_LATENCY = """
import json, time, torch, torch_neuronsim
compiled = torch.compile(lambda a: torch.relu(a) * 2 + 1, backend="neuron", fullgraph=True, dynamic=False)
started = time.perf_counter()
compiled(torch.randn(3, 4, device="neuron"))
first = time.perf_counter() - started
started = time.perf_counter()
compiled(torch.randn(3, 4, device="neuron"))
print(json.dumps({"first": first, "again": time.perf_counter() - started, **torch_neuronsim.compile_stats()}))
"""


def test_a_graph_pays_the_emulated_compile_latency_by_its_ops_once():
    """NEURONSIM_COMPILE_LATENCY applies to torch.compile's graphs too: base plus per op, paid when
    the graph is lowered, counted in emulated_compile_seconds, not paid by a cached graph."""
    import json

    from device_helpers import run_python

    ran = run_python(GRAPH_LATENCY, NEURONSIM_COMPILE_LATENCY="0.2,0.1", NEURONSIM_DISABLE_CACHE="1")
    assert ran.returncode == 0, ran.stderr
    stats = json.loads(ran.stdout.strip().splitlines()[-1])
    assert stats["lowered"] == 1 and stats["emulated_compile_seconds"] >= 0.2 + 0.1 * 3, stats  # relu, mul, add
    assert stats["first"] >= stats["emulated_compile_seconds"] > stats["again"], stats


def test_a_refused_graph_keeps_none_of_its_call_s_device_memory(monkeypatch):
    """The cache keeps a refusal as a value: the CompileError raised carries a traceback whose
    frames hold the call's tensors, and a cached one would keep them on the device for the
    process's life (and make every later full garbage collection longer)."""
    import gc

    from torch_neuronsim.compiler import graph_cache

    monkeypatch.setattr(graph_cache, "_directory", lambda: None)
    graph_cache.clear_memory()
    torch._dynamo.reset()
    gc.collect()
    before = torch.neuron.memory_allocated()
    for n in (1 << 16, 1 << 17):  # lowered and refused, then a new shape refused again
        x = torch.rand(n, device="neuron")
        with pytest.raises(Exception, match="aten::lgamma cannot be lowered to StableHLO"):
            torch.compile(lambda a: torch.lgamma(a) + 1, backend="neuron", fullgraph=True, dynamic=False)(x)
        del x
    torch._dynamo.reset()
    gc.collect()
    assert torch.neuron.memory_allocated() == before
    assert all(isinstance(artifact, (str, graph_cache.Refusal)) for artifact in graph_cache._memory.values())
