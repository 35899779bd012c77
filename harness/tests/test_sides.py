"""harness/worker/sides.py: each side of a case seeded alike."""

from __future__ import annotations

import sys
import traceback

import torch

from conform_cli import REPO

sys.path.insert(0, str(REPO / "harness" / "worker"))
import sides  # noqa: E402


def test_manual_seed_still_seeds_the_cpu_and_the_device_but_queues_nothing_for_absent_accelerators(monkeypatch):
    import torch_neuronsim  # noqa: F401  (registers the neuron device)

    for module in (torch.cuda, torch.xpu, torch.mtia):  # restored after the test
        monkeypatch.setattr(module, "manual_seed_all", module.manual_seed_all)
    sides.seed_no_absent_accelerator()

    def no_stack(*_args, **_kwargs):
        raise AssertionError("a stack formatted to queue a seed for a device that never comes")

    monkeypatch.setattr(traceback, "format_stack", no_stack)

    def draws() -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(1234)
        return torch.rand(5), torch.rand(5, device="neuron").cpu()

    first, again = draws(), draws()
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    torch.manual_seed(99)
    assert not torch.equal(torch.rand(5), first[0]) and not torch.equal(torch.rand(5, device="neuron").cpu(), first[1])
