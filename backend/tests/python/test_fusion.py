"""Adaptive-eager fusion: runs of queued pointwise ops become one executable (one compile-cache
entry keyed by the chain), with the unfused ops' results, whatever the chain does with in-place
writes, views and reads of its intermediates."""

from __future__ import annotations

import json

import pytest
import torch
import torch_neuronsim as ns
from device_helpers import run_python
from hypothesis import given, settings
from hypothesis import strategies as st


def both_ways(fn, *cpu_args):
    """fn on device copies of the arguments with fusion on, then off; results on the CPU."""
    results = []
    for fused in (True, False):
        ns.set_fusion(fused)
        try:
            out = fn(*[a.to("neuron") for a in cpu_args])
            results.append([t.cpu() for t in (out if isinstance(out, (tuple, list)) else [out])])
        finally:
            ns.set_fusion(True)
    return results


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)


def test_a_run_of_pointwise_ops_is_one_fused_executable():
    x = torch.randn(8, 8, device="neuron")
    torch.neuron.synchronize()
    ns._C._reset_execution_stats()
    y = ((x.sin() * 2 + 1).relu() - 0.5).exp()
    y.cpu()
    stats = ns.execution_stats()
    assert stats["fused_chains"] == 1 and stats["fused_ops"] == 6, stats
    assert stats["executables"] == 1, stats


def test_a_chain_ends_at_a_non_fusible_op_and_at_a_host_read():
    x = torch.randn(8, 8, device="neuron")
    torch.neuron.synchronize()
    ns._C._reset_execution_stats()
    a = x.sin().cos()  # chain 1
    s = a.sum(0)  # a reduction ends it (and is its own executable)
    b = s.exp().neg()  # chain 2
    b.cpu()
    stats = ns.execution_stats()
    assert (stats["fused_chains"], stats["fused_ops"], stats["executables"]) == (2, 4, 3), stats
    torch.testing.assert_close(b.cpu(), x.cpu().sin().cos().sum(0).exp().neg())


def test_the_fusion_switch():
    x = torch.randn(4, device="neuron")
    ns.set_fusion(False)
    try:
        torch.neuron.synchronize()
        ns._C._reset_execution_stats()
        (x.sin() + 1).cpu()
        assert ns.execution_stats()["fused_ops"] == 0
    finally:
        ns.set_fusion(True)
    ran = run_python("import torch_neuronsim as ns; print(ns.get_fusion())", NEURONSIM_FUSION="0")
    assert ran.returncode == 0 and ran.stdout.strip() == "False", ran.stderr


def test_a_chain_is_compiled_once_at_the_latency_of_its_ops():
    code = """
    import json, torch, torch_neuronsim as ns
    x = torch.randn(4, 4, device="neuron")
    x.sin().cos().cpu()  # the ops' own executables
    before = ns.compile_cache_stats()
    for _ in range(3):
        (x.sin().cos() * 3 + 1).cpu()
    after = ns.compile_cache_stats()
    print(json.dumps({k: after[k] - before[k] for k in ("compiles", "compiled_ops", "memory_hits", "compile_seconds")}))
    """
    ran = run_python(code, NEURONSIM_COMPILE_LATENCY="0.1,0.05", NEURONSIM_DISABLE_CACHE="1")
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout.strip().splitlines()[-1])
    # mul and add compiled once each, and the chain of four once; the chain's latency counts its ops
    assert got["compiles"] == 3 and got["compiled_ops"] == 1 + 1 + 4, got
    assert got["compile_seconds"] >= 2 * 0.15 + (0.1 + 0.05 * 4), got


def test_in_place_writes_views_and_intermediate_reads_inside_a_chain():
    def chain(x):
        a = x.sin()
        v = a[:, 1:3]  # a view of an intermediate
        b = a.cos()  # reads a before the write below
        v.mul_(3)  # written after
        early = b.cpu()  # an intermediate read back mid-chain
        c = (a + b).neg_()  # reads the written a
        t = c.t()  # a transpose feeding the next op
        d = t.exp() * 0.5
        return early, a, b, c, d

    cpu = torch.randn(5, 4)
    fused, unfused = both_ways(chain, cpu)
    assert_same(fused, unfused)
    assert_same(fused, chain(cpu.clone()))


def _pointwise_opinfos():
    from torch.testing._internal.common_methods_invocations import binary_ufuncs, unary_ufuncs

    return unary_ufuncs + binary_ufuncs


@pytest.mark.parametrize("op", _pointwise_opinfos(), ids=lambda op: op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""))
def test_fused_opinfo_elementwise_ops_equal_the_unfused(op):
    """Each OpInfo unary and binary ufunc, inside a chain (a pointwise op before and after it),
    gives the same bits fused as unfused, on every float32 sample."""
    samples = list(op.sample_inputs("cpu", torch.float32))[:4]
    checked = 0
    for sample in samples:
        args = [sample.input, *sample.args]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if not tensors or any(t.dtype.is_complex for t in tensors):
            continue

        def chain(*device_tensors, sample=sample):
            # a pointwise op before (on floating inputs) and after (on floating results)
            before = iter(t.mul(1.0) if t.is_floating_point() else t for t in device_tensors)
            call = [next(before) if isinstance(a, torch.Tensor) else a for a in [sample.input, *sample.args]]
            out = op(*call, **sample.kwargs)
            outs = out if isinstance(out, (tuple, list)) else [out]
            return [o.abs() if o.is_floating_point() else o for o in outs]

        try:
            fused, unfused = both_ways(chain, *tensors)
        except Exception as error:  # the op refuses the sample on the device: both ways, alike
            with pytest.raises(type(error)):
                ns.set_fusion(False)
                try:
                    chain(*[t.to("neuron") for t in tensors])[0].cpu()
                finally:
                    ns.set_fusion(True)
            continue
        assert_same(fused, unfused)
        checked += 1
    if checked == 0:
        pytest.skip("no float32 sample the device takes")


UNARY = ["sin", "cos", "exp", "neg", "abs", "relu", "sigmoid", "tanh", "sqrt", "reciprocal", "floor"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


@st.composite
def chains(draw):
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "unary_", "binary", "view", "read", "scalar"]))
        if kind in ("unary", "unary_"):
            steps.append((kind, draw(st.sampled_from(UNARY))))
        elif kind == "binary":
            steps.append((kind, draw(st.sampled_from(BINARY))))
        elif kind == "scalar":
            steps.append((kind, draw(st.floats(-3, 3, allow_nan=False, width=32))))
        else:
            steps.append((kind, None))
    return steps


def run_chain(steps, x, y):
    reads = []
    for kind, what in steps:
        if kind == "unary":
            x = getattr(torch, what)(x)
        elif kind == "unary_":
            x = getattr(x, what + "_")()
        elif kind == "binary":
            x = getattr(torch, what)(x, y)
        elif kind == "scalar":
            x = x * what + 1
        elif kind == "view":
            x = x.t()
            y = y.t()
        else:
            reads.append(x.to("cpu", copy=True))  # a copy on the CPU too: later in-place ops leave it
    return [*reads, x.cpu()]


@settings(max_examples=60, deadline=None)
@given(steps=chains(), seed=st.integers(0, 2**16))
def test_random_chains_fused_equal_unfused_and_the_cpu(steps, seed):
    gen = torch.Generator().manual_seed(seed)
    x, y = torch.randn(6, 6, generator=gen), torch.randn(6, 6, generator=gen)
    fused, unfused = both_ways(lambda a, b: run_chain(steps, a, b), x, y)
    assert_same(fused, unfused)
    torch.testing.assert_close(fused, run_chain(steps, x.clone(), y.clone()), equal_nan=True)
