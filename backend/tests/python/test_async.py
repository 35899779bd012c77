"""Asynchronous execution: ops return once queued and run later in stream order; host reads wait
for what they depend on; an op's error surfaces at the next synchronizing call; events order
streams; queued work keeps the memory it reads, not its storages."""

import time

import pytest
import torch
import torch_neuronsim as ns
from device_helpers import run_python


def occupy(seconds: float, device: int = 0) -> None:
    """Keeps the current stream of `device` busy, as a long kernel would."""
    ns._C._occupy_stream(device, seconds)


def test_an_op_returns_once_queued_and_a_host_read_waits_for_it():
    x = torch.randn(64, 64, device="neuron")
    expected = x.cpu().sin()
    x.sin().cpu()  # compiled before: the call below only queues
    occupy(0.5)
    started = time.perf_counter()
    y = x.sin()
    queued_in = time.perf_counter() - started
    assert queued_in < 0.25  # the call did not wait for the busy stream
    assert not torch.neuron.current_stream().query()
    assert ns._C._pending(0) >= 1
    assert torch.equal(y.cpu(), expected)  # the read waited for the op
    assert torch.neuron.current_stream().query() and ns._C._pending(0) == 0


def test_an_error_inside_an_op_surfaces_at_the_next_synchronizing_call():
    x = torch.randn(4, 3, device="neuron")
    bad = torch.tensor([0, 9], device="neuron")
    before = ns.execution_stats()["late_errors"]
    z = x.index_select(0, bad)  # no error at the call: the op is queued
    assert z.shape == (2, 3)
    with pytest.raises(IndexError, match=r"aten::index_select failed on the device \(op \d+ queued on stream 0"):
        torch.neuron.synchronize()
    torch.neuron.synchronize()  # raised once
    assert ns.execution_stats()["late_errors"] == before + 1


def test_a_late_error_surfaces_in_the_next_host_read_of_any_tensor():
    x = torch.randn(4, 3, device="neuron")
    x.index_select(0, torch.tensor([5], device="neuron"))
    unrelated = torch.ones(2, device="neuron")
    with pytest.raises(IndexError, match="index out of range"):
        unrelated.cpu()  # the next call that synchronizes the device raises it
    assert unrelated.cpu().tolist() == [1.0, 1.0]


def test_launch_blocking_raises_where_the_op_is_called():
    x = torch.randn(4, 3, device="neuron")
    ns.set_launch_blocking(True)
    try:
        with pytest.raises(IndexError, match="index out of range in self") as raised:
            x.index_select(0, torch.tensor([7], device="neuron"))
        assert "failed on the device" not in str(raised.value)
    finally:
        ns.set_launch_blocking(False)


def test_the_launch_blocking_variable_sets_the_mode():
    code = """
    import torch, torch_neuronsim as ns
    x = torch.randn(4, 3, device="neuron")
    try:
        x.index_select(0, torch.tensor([7], device="neuron"))
    except IndexError:
        print("raised at the call", ns.get_launch_blocking())
    """
    ran = run_python(code, NEURONSIM_LAUNCH_BLOCKING="1")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "raised at the call True"
    assert run_python(code, NEURONSIM_LAUNCH_BLOCKING="yes").returncode != 0  # a clear error, not a default


def test_an_event_orders_work_across_streams():
    x = torch.randn(256, device="neuron")
    (x * 2 + 1).cpu()  # compiled before: the calls below only queue
    producer, consumer = torch.neuron.Stream(), torch.neuron.Stream()
    for _ in range(3):
        with torch.neuron.stream(producer):
            occupy(0.3)
            y = x * 2
            done = torch.neuron.Event()
            done.record()
        assert not done.query()
        consumer.wait_event(done)
        with torch.neuron.stream(consumer):
            z = y + 1
        assert not consumer.query()  # waiting on the producer
        consumer.synchronize()
        assert done.query()
        assert torch.equal(z.cpu(), x.cpu() * 2 + 1)


def test_wait_stream_and_timing_events():
    side = torch.neuron.Stream()
    x = torch.ones(16, device="neuron")
    start, end = torch.neuron.Event(enable_timing=True), torch.neuron.Event(enable_timing=True)
    with torch.neuron.stream(side):
        start.record()
        occupy(0.05)
        y = x + 1
        end.record()
    torch.neuron.current_stream().wait_stream(side)
    z = y * 3  # on the default stream, after the side stream's work
    assert torch.equal(z.cpu(), torch.full((16,), 6.0))
    end.synchronize()
    assert start.elapsed_time(end) >= 40.0


def test_a_block_queued_work_reads_is_not_reused_before_it_ran():
    side = torch.neuron.Stream()
    x = torch.arange(1024, dtype=torch.float32, device="neuron")
    with torch.neuron.stream(side):
        occupy(0.3)
        y = x * 2  # reads x later, on the side stream
    x.record_stream(side)
    del x  # the caller's last reference: the queued op still holds the block
    reused = torch.full((1024,), 7.0, device="neuron")  # same size, on the default stream
    side.synchronize()
    assert torch.equal(y.cpu(), torch.arange(1024, dtype=torch.float32) * 2)
    assert torch.equal(reused.cpu(), torch.full((1024,), 7.0))


def _storage_use_count(t: torch.Tensor) -> int:
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata)


@pytest.mark.parametrize("size", [64, 0])
@pytest.mark.parametrize("call", ["result", "in_place", "out", "view_in_place", "copy"])
def test_queued_work_holds_no_reference_to_its_operands_storages(call, size):
    """A storage's use count is its callers' alone, whether or not the work using it has run, as
    on a device whose launches hold no reference; the work holds the memory instead (the test
    above). PyTorch reads the count: autograd adds a gradient into another in place only when it
    holds the last reference, so otherwise the ops a backward runs, and the executables it
    compiles, would depend on how far the queue has got."""
    x = torch.randn(size, device="neuron")  # of no bytes too: its storage has no memory to lease
    out = torch.empty(size, device="neuron")
    calls = {"result": lambda: x * 2, "in_place": lambda: x.add_(1), "out": lambda: torch.mul(x, 2, out=out),
             "view_in_place": lambda: x[::2].mul_(3), "copy": lambda: out.copy_(x)}
    occupy(0.3)
    result = calls[call]()
    assert ns.neuron.pending() > 0  # the work has not run
    queued = [_storage_use_count(t) for t in (x, out, result)]
    torch.neuron.synchronize()
    assert [_storage_use_count(t) for t in (x, out, result)] == queued


def test_a_backward_runs_the_same_ops_whether_or_not_earlier_work_has_run():
    """The property above where it shows: h's gradient has two contributions, added in place only
    if autograd holds the first one's last reference."""
    w = torch.randn(16, 16, device="neuron", requires_grad=True)
    x = torch.randn(4, 16, device="neuron")

    def backward(busy: bool) -> dict:
        w.grad = None
        torch.neuron.synchronize()
        ns.clear_op_tracking()
        if busy:
            occupy(0.3)
        h = x @ w
        (h.sin().sum() + h.cos().sum()).backward()
        torch.neuron.synchronize()
        return ns.get_executed_ops()

    idle = backward(busy=False)
    assert backward(busy=True) == idle
    assert "aten::add_.Tensor" in idle, idle  # in place: nothing else held the first contribution
    x = torch.randn(0, 16, device="neuron")  # and where h has no elements
    idle = backward(busy=False)
    assert backward(busy=True) == idle


def test_queued_work_sees_its_arguments_as_they_were_at_the_call():
    x = torch.randn(3, 5, device="neuron")
    cpu = x.cpu()
    scalar = torch.tensor(2.0)  # a CPU scalar, read when the op runs
    occupy(0.2)
    y = x * scalar
    s = x.sin()
    scalar.fill_(100.0)
    x.t_()  # an in-place change of sizes and strides after the calls
    assert torch.equal(y.cpu(), cpu * 2)
    assert torch.equal(s.cpu(), cpu.sin())
    assert x.shape == (5, 3)


def test_a_host_write_waits_for_queued_readers():
    x = torch.zeros(1000, device="neuron")
    occupy(0.2)
    y = x + 1  # queued: reads x later
    x.copy_(torch.full((1000,), 5.0))  # a host write waits for it
    assert torch.equal(y.cpu(), torch.ones(1000))
    assert torch.equal(x.cpu(), torch.full((1000,), 5.0))


def test_ops_the_device_runs_at_their_call_still_follow_the_queue():
    x = torch.randn(50, device="neuron")
    occupy(0.2)
    y = x.exp()  # queued
    z = torch.nonzero(y > 1)  # data-dependent: the CPU fallback, which waits for y first
    assert torch.equal(z.cpu(), torch.nonzero(x.cpu().exp() > 1))
    g = torch.Generator(device="neuron").manual_seed(3)
    r = torch.empty(5, device="neuron").normal_(generator=g)  # random: drawn at its call
    assert r.isfinite().all().item()


def test_metrics_report_pending_work_fusion_and_compilation():
    x = torch.randn(32, device="neuron")
    torch.neuron.synchronize()
    occupy(0.3)
    y = (x.sin() + 1).cos()
    snapshot = torch.neuron.metrics()
    assert snapshot["pending"][0] >= 3 and torch.neuron.pending() >= 3  # the open chain, at least
    assert {"compiled", "compile_seconds", "memory_hits", "disk_hits"} <= set(snapshot["compilation"])
    y.cpu()
    after = torch.neuron.metrics()
    assert after["pending"][0] == 0
    assert after["execution"]["fused_ops"] >= snapshot["execution"]["fused_ops"] + 3


def test_a_kernel_that_calls_device_ops_itself_does_not_wait_for_its_own_queue():
    """linspace with tensor bounds and a device makes its result there through device ops of its
    own: run at the call, and safe even when queued work reaches such a kernel (in a process of
    its own, so that a deadlock is a failure, not a hang)."""
    code = """
    import torch, torch_neuronsim
    s, e = torch.tensor(0., device="neuron"), torch.tensor(1., device="neuron")
    for _ in range(3):
        r = torch.linspace(s, e, 5, device="neuron")
        y = (r * 2).exp()
    print(y.cpu().tolist() == torch.linspace(0, 1, 5).mul(2).exp().tolist())
    """
    ran = run_python(code)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True"


def test_queued_results_take_the_cpu_kernels_dtypes_and_strides():
    """A queued op's results are laid out as the CPU kernel lays them out, where the Meta kernel
    says otherwise: a 16-bit layer norm's float32 statistics, a channels-last pixel shuffle."""
    x = torch.randn(2, 3, 4, dtype=torch.bfloat16)
    want = torch.native_layer_norm(x, [4], None, None, 1e-5)
    y = torch.randn(1, 9, 2, 2).to(memory_format=torch.channels_last)
    for _ in range(2):  # compiled, then from the cache
        got = torch.native_layer_norm(x.to("neuron"), [4], None, None, 1e-5)
        assert [t.dtype for t in got] == [t.dtype for t in want]
        shuffled = torch.nn.functional.pixel_shuffle(y.to("neuron"), 3)
        assert shuffled.stride() == torch.nn.functional.pixel_shuffle(y, 3).stride()
        assert torch.equal(shuffled.cpu(), torch.nn.functional.pixel_shuffle(y, 3))
