"""Streams and events. Work is synchronous, so these check the documented contracts:
query() True once work is issued, waits and synchronize() return, elapsed_time is measured
between records, and the current stream is set and restored."""

import time

import pytest
import torch


def test_stream_basics():
    s = torch.neuron.Stream()
    assert isinstance(s, torch.Stream)
    assert s.device == torch.device("neuron", 0)
    assert s.stream_id != 0  # not the default stream
    x = torch.randn(100, device="neuron")
    with torch.neuron.stream(s):
        y = x * 2
    s.synchronize()
    assert s.query()
    assert torch.equal(y.cpu(), x.cpu() * 2)
    assert torch.neuron.Stream(device=1).device == torch.device("neuron", 1)


def test_stream_context_sets_and_restores_current_stream():
    default = torch.neuron.current_stream()
    assert default == torch.neuron.default_stream()
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        assert torch.neuron.current_stream() == s
        inner = torch.neuron.Stream()
        with torch.neuron.stream(inner):
            assert torch.neuron.current_stream() == inner
        assert torch.neuron.current_stream() == s
    assert torch.neuron.current_stream() == default


def test_stream_context_restores_on_exception_and_other_device():
    s1 = torch.neuron.Stream(device=1)
    with pytest.raises(ValueError):
        with torch.neuron.stream(s1):
            assert torch.neuron.current_stream(1) == s1
            raise ValueError
    assert torch.neuron.current_stream(1) == torch.neuron.default_stream(1)
    assert torch.neuron.current_device() == 0


def test_wait_stream_and_wait_event():
    a, b = torch.neuron.Stream(), torch.neuron.Stream()
    with torch.neuron.stream(a):
        x = torch.ones(10, device="neuron") + 1
    b.wait_stream(a)
    event = a.record_event()
    b.wait_event(event)
    event.wait(b)
    with torch.neuron.stream(b):
        assert x.sum().item() == 20
    assert event.query()


def test_event_elapsed_time():
    start = torch.neuron.Event(enable_timing=True)
    end = torch.neuron.Event(enable_timing=True)
    assert start.query()  # never recorded
    start.record()
    time.sleep(0.05)
    end.record()
    end.synchronize()
    elapsed = start.elapsed_time(end)
    assert 45 <= elapsed < 5000


def test_elapsed_time_requires_timing_and_records():
    a, b = torch.neuron.Event(), torch.neuron.Event()
    a.record()
    b.record()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing=True"):
        a.elapsed_time(b)
    c, d = torch.neuron.Event(enable_timing=True), torch.neuron.Event(enable_timing=True)
    c.record()
    with pytest.raises((RuntimeError, ValueError), match="recorded"):
        c.elapsed_time(d)


def test_priorities():
    high = torch.neuron.Stream(priority=-1)
    low = torch.neuron.Stream(priority=0)
    assert high.stream_id != low.stream_id  # drawn from separate pools
    for s in (high, low):
        with torch.neuron.stream(s):
            assert torch.neuron.current_stream() == s
        assert s.query()
