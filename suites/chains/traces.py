"""The aten ops a tiny model runs, forward and backward, recorded on the CPU and cut into windows that
replay on any device: the chains of the chains suite's `windows` check.

A recording is every aten call of one training step (forward with labels, the loss's backward),
each tensor argument as a reference to the value it is (made by an earlier call, or from outside:
a parameter, an input) with a copy of what it held then. A window is some consecutive calls; it
replays with the values its own calls make, and copies of the others as they were at the call that
first reads them, so that the window runs alone, as a device would run it fused, on the device and
on the CPU alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch
import torch.nn.attention
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from evidence import describe_tensor


@dataclass(frozen=True)
class Ref:
    """A tensor argument: which value (`key`), and a copy of what it held at the call."""

    key: int
    held: torch.Tensor


@dataclass(frozen=True)
class Made:
    """A tensor a call returned: the key of the value it is."""

    key: int


@dataclass
class Call:
    op: Any  # an OpOverload
    args: tuple
    kwargs: dict
    made: Any  # the result's structure, each tensor a Made
    backward: bool

    @property
    def random(self) -> bool:
        return torch.Tag.nondeterministic_seeded in self.op.tags


@dataclass
class Recording:
    calls: list[Call] = field(default_factory=list)
    forward_calls: int = 0


class _Recorder(TorchDispatchMode):
    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.recording = recording
        self.keys: dict[int, int] = {}
        self.alive: list[torch.Tensor] = []  # so that no two values share an id()
        self.backward = False

    def key(self, t: torch.Tensor) -> int:
        if id(t) not in self.keys:
            self.keys[id(t)] = len(self.keys)
            self.alive.append(t)
        return self.keys[id(t)]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        as_refs = pytree.tree_map_only(torch.Tensor, lambda t: Ref(self.key(t), t.detach().clone()), (args, kwargs))
        result = func(*args, **kwargs)
        made = pytree.tree_map_only(torch.Tensor, lambda t: Made(self.key(t)), result)
        self.recording.calls.append(Call(func, *as_refs, made, self.backward))
        return result


@cache
def record(architecture: str, dtype: torch.dtype, seed: int) -> Recording:
    """One training step of the architecture's tiny model (suitelib.tiny_models), recorded, with
    attention computed as its math."""
    from suitelib import tiny_models

    model, _ = tiny_models.build(architecture, dtype, seed)
    batch = tiny_models.inputs(seed)
    recording = Recording()
    recorder = _Recorder(recording)
    # attention as its math (matmuls, softmax): the CPU's own flash kernel is no op a device is given
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH), recorder:
        loss = model(**batch, labels=batch["input_ids"]).loss
        recording.forward_calls = len(recording.calls)
        recorder.backward = True
        loss.backward()
    return recording


def windows(recording: Recording, length: int, most: int) -> list[int]:
    """Where up to `most` windows of `length` calls start, spread evenly over the step (forward and
    backward); none holding a random op (its values are the generator's, not the window's)."""
    calls = recording.calls
    starts = [i for i in range(max(0, len(calls) - length + 1))
              if not any(call.random for call in calls[i:i + length])]
    if len(starts) <= most:
        return starts
    return [starts[round(k * (len(starts) - 1) / (most - 1))] for k in range(most)] if most > 1 else starts[:1]


def replay(calls: list[Call], device: str | torch.device) -> list[torch.Tensor]:
    """Runs the calls on `device`: every value they made and every value from outside they read, as
    it is after the last call, in the order first seen."""
    values: dict[int, torch.Tensor] = {}

    def value(ref: Ref) -> torch.Tensor:
        if ref.key not in values:
            values[ref.key] = ref.held.clone().to(device)
        return values[ref.key]

    for call in calls:
        args, kwargs = pytree.tree_map_only(Ref, value, (call.args, call.kwargs))
        if "device" in kwargs and kwargs["device"] is not None:
            kwargs = {**kwargs, "device": torch.device(device)}
        result = call.op(*args, **kwargs)
        for made, tensor in zip(pytree.tree_leaves(call.made), pytree.tree_leaves(result)):
            if isinstance(made, Made) and isinstance(tensor, torch.Tensor):
                values[made.key] = tensor
    return [v for v in values.values()]


def describe(calls: list[Call], first: int) -> list[str]:
    """How evidence shows a window: `#412 aten.mm.default(float32[14, 64], float32[64, 64])`."""
    def arg(value: Any) -> str:
        if isinstance(value, Ref):
            return describe_tensor(value.held)
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(arg(v) for v in value) + "]"
        return repr(value)[:30]

    return [f"#{first + i} {call.op}({', '.join([arg(a) for a in call.args] + [f'{k}={arg(v)}' for k, v in call.kwargs.items()])})"
            for i, call in enumerate(calls)]
