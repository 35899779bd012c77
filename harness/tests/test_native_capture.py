"""The dispatcher capture in C++ (harness/worker/native_capture.py, capture_observer.cpp) against
what ran, and against the Python capture (docs/backends.md, "Native or fallback").

What ran: the bundled backend tracks every kernel and fallback it runs itself, so over a space of
workloads (forward, backward on the device's autograd thread, second order, out=, views, explicit
and implicit composites, lists, factories, in-place, the boxed fallback) the observer must count
each tracked op with the backend's count and route. Nothing traced by fake tensors is the device's.

The Python capture: a dispatch mode changes what PyTorch runs (at::isTensorSubclassLike is true
under any mode, so reshape takes view, autograd accumulates gradients out of place, linalg
backward formulas avoid in-place ops), so its counts differ from the observer's. What must agree
is the route of every op both saw, and each case's outcome, on a backend whose account comes from
the capture alone (the foreign one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from conform_cli import FOREIGN, REPO, cli, results, run_record

sys.path.insert(0, str(REPO / "harness" / "worker"))


def workloads(device: str):
    """Each a function running one kind of device work (its name says which)."""

    def forward():
        x = torch.randn(4, 4, device=device)
        return (x * 2 + 1).sin().sum()

    def backward():
        a = torch.randn(4, 4, requires_grad=True)
        ((a.to(device) * a.to(device)).sin().sum()).backward()

    def second_order():
        a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
        x = a.to(device)
        grad, = torch.autograd.grad(torch.linalg.det(x), x, create_graph=True)
        grad.sum().backward()

    def out_and_lists():
        z = torch.randn(4, device=device)
        torch.cat([z, z], out=torch.empty(0, device=device))
        torch.stack([z, z, z])

    def views_and_composites():
        x = torch.randn(4, 4, device=device)
        y = torch.empty_like(x).copy_(x).t().contiguous().reshape(16).clone()
        torch.nn.functional.layer_norm(y.view(4, 4), (4,))
        x.expand(2, 4, 4).sum(0).transpose(0, 1)

    def in_place_and_index():
        z = torch.zeros(6, device=device)
        z.add_(1).mul_(3)
        torch.index_add(z, 0, torch.tensor([0, 1], device=device), z[:2])
        z[torch.tensor([1, 2], device=device)] = 5.0

    return [forward, backward, second_order, out_and_lists, views_and_composites, in_place_and_index]


def test_the_observer_counts_each_op_as_the_backend_ran_it():
    import torch_neuronsim as backend
    from native_capture import NativeCapture, load
    from vocabulary import Route

    ops, why = load()
    assert ops is not None, why  # the test machine has a compiler: make build built it
    device = torch._C._get_privateuse1_backend_name()
    capture = NativeCapture(ops)
    for work in workloads(device):
        capture.clear()
        backend.clear_op_tracking()
        with capture:
            work()
        ran = {Route.NATIVE: dict(backend.get_executed_ops()), Route.FALLBACK: dict(backend.get_fallback_ops())}
        assert ran[Route.NATIVE], work.__name__
        counts = capture.counts
        for route, tracked in ran.items():
            seen = {op: counts[route].get(op) for op in tracked}
            assert seen == tracked, f"{work.__name__}, {route}"


@pytest.mark.parametrize("call", ["sin", "det", "layer_norm", "clone", "cat_out", "index_put", "cumsum_half"])
def test_one_call_is_counted_alike_by_both_captures(call):
    """One forward call, where no mode-sensitive path is taken: the two captures count the same
    ops, each once per call, and nothing a kernel (the fallback's copies included) calls itself."""
    from dispatch_capture import Capture
    from native_capture import NativeCapture, load

    device = torch._C._get_privateuse1_backend_name()
    x = torch.randn(3, 3, dtype=torch.float64).to(device)
    # made outside: torch.tensor(device=) copies with the Python key excluded, unseen by the mode
    rows, one = torch.tensor([0, 2]).to(device), torch.tensor(1.0, dtype=x.dtype).to(device)
    calls = {
        "sin": lambda: x.sin(),
        "det": lambda: torch.linalg.det(x),  # the bundled backend's fallback
        "layer_norm": lambda: torch.nn.functional.layer_norm(x, (3,)),
        "clone": lambda: torch.empty_like(x).copy_(x).clone(),
        "cat_out": lambda: torch.cat([x, x], out=torch.empty(0, device=device, dtype=x.dtype)),
        "index_put": lambda: x.index_put_((rows,), one),
        "cumsum_half": lambda: x.half().cumsum(0),
    }
    counted = []
    for capture in (Capture(device), NativeCapture(load()[0])):
        capture.clear()
        with capture:
            calls[call]()
        counted.append({route: ops for route, ops in capture.counts.items() if route != "composite"})
    assert counted[0] == counted[1]
    assert counted[1]["native"] or counted[1]["fallback"]


def test_fake_tensors_are_not_the_device_s():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from native_capture import NativeCapture, load

    device = torch._C._get_privateuse1_backend_name()
    capture = NativeCapture(load()[0])
    capture.clear()
    with FakeTensorMode(), capture:
        (torch.empty(4, 4, device=device) * 2).sum()
    assert capture.counts == {"native": {}, "fallback": {}, "composite": {}, "host_only": {}}


def both_captures(device: str):
    from dispatch_capture import Capture
    from native_capture import NativeCapture, load

    return [Capture(device), NativeCapture(load()[0])]


@pytest.fixture(scope="module")
def test_ops():
    """Ops of a namespace of the test's own, each a kernel of a kind the captures must tell apart:
    computed on the device, copied to the host and computed there (with the host's result moved
    back, or a scalar read on the host only), registered on the autograd key alone, and one whose
    device kernel comes later (the CPU fallback runs it until then)."""
    device = torch._C._get_privateuse1_backend_name()
    lib = torch.library.Library("conform_test", "DEF")
    for name in ("on_device", "round_trip", "reads_scalar", "autograd_only", "late_0", "late_1"):
        lib.define(f"{name}(Tensor x) -> Tensor")
        lib.impl(name, torch.sin, "CPU")
    lib.impl("on_device", lambda x: torch.sin(x), "PrivateUse1")
    lib.impl("round_trip", lambda x: torch.sin(x.cpu()).to(x.device), "PrivateUse1")
    lib.impl("reads_scalar", lambda x: torch.sin(x) * (1.0 if x.sum().item() else 1.0), "PrivateUse1")
    lib.impl("autograd_only", lambda x: torch.sin(x), "AutogradPrivateUse1")
    yield lib, device
    lib._destroy()


@pytest.mark.parametrize("which", [0, 1], ids=["python", "native"])
def test_a_kernel_that_copies_to_the_host_is_host_only(test_ops, which):
    """Over kernels of every kind: a copy of device data to the host inside the backend's own
    kernel makes the call host-only (its device ops and the copies are the kernel's, uncounted);
    a scalar read, a kernel on the autograd key, a kernel on the device are native."""
    _, device = test_ops
    x = torch.randn(4, device=device)
    capture = both_captures(device)[which]
    for op, route in [("on_device", "native"), ("round_trip", "host_only"), ("reads_scalar", "native"),
                      ("autograd_only", "native")]:
        capture.clear()
        with capture:
            for _ in range(3):
                getattr(torch.ops.conform_test, op)(x)
        counts = {r: ops for r, ops in capture.counts.items() if ops}
        seen = f"conform_test::{op}"
        if op == "autograd_only" and which == 0:
            seen = "aten::sin"  # the Python mode, below autograd, sees the autograd kernel's parts
        assert counts == {route: {seen: 3}}, op
    capture.clear()
    with capture:  # a move to the host by the case itself is the case's, not a kernel computing there
        x.cpu()
    assert not capture.counts["host_only"]


@pytest.mark.parametrize("which", [0, 1], ids=["python", "native"])
def test_a_kernel_registered_later_is_seen_after_clear(test_ops, which):
    lib, device = test_ops
    x = torch.randn(4, device=device)
    capture = both_captures(device)[which]
    late = f"late_{which}"
    capture.clear()
    with capture:
        getattr(torch.ops.conform_test, late)(x)
    assert capture.counts["fallback"] == {f"conform_test::{late}": 1}
    lib.impl(late, lambda t: torch.sin(t), "PrivateUse1")
    capture.clear()  # a new case: the dispatcher's registrations are read again
    with capture:
        getattr(torch.ops.conform_test, late)(x)
    assert capture.counts["native"] == {f"conform_test::{late}": 1} and not capture.counts["fallback"]


SLICES = {
    "ops": ("--suite", "ops", "--ops",
            "^(add|mul|mm|sin|nn.functional.linear|cat|softmax|linalg.det|clone|where|index_put)$",
            "--dtypes", "float32", "--checks", "forward,backward,gradgrad,out"),
    "modules": ("--suite", "modules", "--ops", "^nn.(Linear|LayerNorm)$", "--dtypes", "float32"),
    "hf": ("--suite", "hf", "--ops", "^LlamaForCausalLM$", "--dtypes", "float32", "--checks", "forward,backward"),
    "compile": ("--suite", "compile", "--ops", "^(add|mm|softmax)$", "--dtypes", "float32",
                "--checks", "forward", "--suite-option", "dynamo_backend=aot_eager"),
}


def run_with(capture: str, args: tuple[str, ...], db: Path) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURON_CONFORM_CAPTURE", capture)
        cli("run", *args, *FOREIGN, "--no-skiplists", "--reruns", "0", "--db", str(db), check=False)
    return db


@pytest.mark.parametrize("name", SLICES)
def test_both_captures_route_each_op_alike_and_decide_alike(name, tmp_path):
    python = run_with("python", SLICES[name], tmp_path / "python.db")
    native = run_with("native", SLICES[name], tmp_path / "native.db")
    assert run_record(python)["backend_info"]["capture"] == "python (NEURON_CONFORM_CAPTURE=python)"
    assert run_record(native)["backend_info"]["capture"] == "native"
    by_python, by_native = results(python), results(native)
    assert len(by_native) >= 2 and by_native.keys() == by_python.keys()
    assert {c: r["outcome"] for c, r in by_native.items()} == {c: r["outcome"] for c, r in by_python.items()}
    routed = {}
    for case in by_native:
        for op in {*by_native[case]["native_ops"], *by_native[case]["fallback_ops"]}:
            routes = [("native" if op in r[case]["native_ops"] else "fallback" if op in r[case]["fallback_ops"]
                       else None) for r in (by_native, by_python)]
            if None not in routes and routes[0] != routes[1]:
                routed[f"{case} {op}"] = routes
    assert routed == {}
    if name != "compile":  # the capture decided: every match saw ops (a compiled graph is opaque)
        blind = [c for c, r in by_native.items()
                 if r["outcome"] in ("pass", "fallback") and not (r["native_ops"] or r["fallback_ops"])]
        assert blind == []


def test_the_bundled_backends_host_only_kernels_are_host_only(tmp_path):
    """The bundled backend's own host-only kernels (searchsorted, bucketize: registered, but copying
    their inputs to the host and computing there) match host-only, never pass nor fallback: the
    classification meets a real backend's kernel, not only a planted one."""
    db = tmp_path / "results.db"
    cli("run", "--ops", "^(searchsorted|bucketize)$", "--dtypes", "float32", "--checks", "forward",
        "--no-skiplists", "--reruns", "0", "--db", str(db))
    got = results(db)
    for op in ("searchsorted", "bucketize"):
        found = got[f"ops/{op}/float32/forward"]
        assert found["outcome"] == "host_only", found
        kernels = {f"aten::{op}.Tensor", f"aten::{op}.Scalar"}
        assert f"aten::{op}.Tensor" in found["host_only_ops"] and set(found["host_only_ops"]) <= kernels, found
        assert not found["fallback_ops"], found
