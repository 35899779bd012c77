"""Per-device random number generators, as in torch.cuda.random."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from .. import _C
from . import _device_index

__all__ = [
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
]


def _generator(device: Any = None) -> torch.Generator:
    return _C._default_generator(_device_index(device))


def manual_seed(seed: int) -> None:
    """Seed the current device's generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every device's generator (torch.manual_seed calls this too)."""
    for index in range(_C._device_count()):
        _C._default_generator(index).manual_seed(int(seed))


def seed() -> None:
    """Seed the current device's generator with a non-deterministic number."""
    _generator().seed()


def seed_all() -> None:
    first = _C._default_generator(0).seed()
    for index in range(1, _C._device_count()):
        _C._default_generator(index).manual_seed(first)


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device: Any = "neuron") -> torch.Tensor:
    """The generator state of a device as a CPU ByteTensor."""
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "neuron") -> None:
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(_C._device_count())]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)
