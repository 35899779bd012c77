"""The c10d backend for neuron tensors, in a world of one process (the distributed suite runs
worlds of several ranks): registration, routing, results copied back into device memory through
any strides, async work and its future, the collective counters, and refusals that name the
collective."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
import torch.distributed as dist
import torch_neuronsim


@pytest.fixture
def world() -> Iterator[None]:
    dist.init_process_group("cpu:gloo,neuron:neuron", store=dist.HashStore(), rank=0, world_size=1)
    torch_neuronsim.clear_collective_stats()
    yield
    dist.destroy_process_group()


def test_the_backend_is_registered_for_the_neuron_device():
    assert dist.Backend.default_device_backend_map["neuron"] == "neuron"
    assert dist.Backend.NEURON == "neuron"


def test_results_reach_device_memory_through_a_view_and_are_counted(world):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4).neuron()
    view = base.t()  # non-contiguous: the backend stages a contiguous copy and writes back
    work = dist.all_reduce(view, dist.ReduceOp.MAX, async_op=True)
    assert work.wait()
    assert view.device.type == "neuron" and not view.is_contiguous()
    assert torch.equal(base.cpu(), torch.arange(12, dtype=torch.float32).reshape(3, 4))
    received = torch.zeros(3, 4, device="neuron")
    dist.broadcast(received, src=0)
    stats = torch_neuronsim.get_collective_stats()
    assert stats == {"all_reduce": {"calls": 1, "bytes": 48}, "broadcast": {"calls": 1, "bytes": 48}}
    torch_neuronsim.clear_collective_stats()
    assert torch_neuronsim.get_collective_stats() == {}


def test_the_future_gives_the_device_tensors(world):
    x = torch.full((4,), 3.0, device="neuron")
    future = dist.all_reduce(x, async_op=True).get_future()
    (result,) = future.wait()
    assert result.device.type == "neuron" and torch.equal(result.cpu(), torch.full((4,), 3.0))


def test_refusals_name_the_collective(world):
    with pytest.raises(ValueError, match="all_reduce with ReduceOp.AVG is not supported for Int tensors"):
        dist.all_reduce(torch.ones(4, dtype=torch.int32, device="neuron"), dist.ReduceOp.AVG)
    # recv from any source has no staged implementation
    with pytest.raises(RuntimeError, match="Backend neuron does not support recvAnysource"):
        dist.recv(torch.ones(2, device="neuron"))


def test_the_default_device_map_routes_neuron_tensors_here():
    dist.init_process_group(store=dist.HashStore(), rank=0, world_size=1)
    try:
        torch_neuronsim.clear_collective_stats()
        x = torch.ones(2, device="neuron")
        dist.all_reduce(x)
        assert torch_neuronsim.get_collective_stats()["all_reduce"]["calls"] == 1
    finally:
        dist.destroy_process_group()
