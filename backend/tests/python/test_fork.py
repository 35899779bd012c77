"""fork() after the device was initialised fails clearly in the child; spawn works."""

import multiprocessing as mp

import torch


def _use_device(queue):
    try:
        queue.put(("ok", torch.ones(2, device="neuron").sum().item()))
    except Exception as exc:  # reported to the parent
        queue.put((type(exc).__name__, str(exc)))


def _run(method):
    ctx = mp.get_context(method)
    queue = ctx.Queue()
    process = ctx.Process(target=_use_device, args=(queue,))
    process.start()
    result = queue.get(timeout=120)
    process.join(timeout=60)
    return result, process.exitcode


def test_fork_after_init_raises_clear_error():
    torch.ones(1, device="neuron")  # initialise in the parent
    assert torch.neuron.is_initialized()
    (kind, message), exitcode = _run("fork")
    assert kind == "RuntimeError"
    assert "fork()ed child" in message and "'spawn'" in message
    assert exitcode == 0  # an exception, not a crash


def test_spawn_works():
    torch.ones(1, device="neuron")
    (kind, value), exitcode = _run("spawn")
    assert (kind, value, exitcode) == ("ok", 2.0, 0)
