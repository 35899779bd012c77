"""The c10d backend of the ``neuron`` device, registered as ``neuron`` for ``neuron`` tensors.

After ``import torch_neuronsim`` (or ``import torch`` with the package installed),
``init_process_group(backend="cpu:gloo,neuron:neuron")``, or ``init_process_group()`` with the
default device map, sends collectives on ``neuron`` tensors here, and
``init_device_mesh("neuron", (N,))`` places DTensor and FSDP2 shards on ``neuron:<rank>``.

The device is emulated in host memory, so each collective copies its tensors to host memory,
runs through a Gloo process group of its own (under the store prefix ``neuron/``) and copies
the results back when its work ends; ``wait()`` and the work's future (DDP's comm hooks) both
see the device tensors updated. ``get_collective_stats()`` counts calls and bytes per
collective. Collectives it does not implement raise "Backend neuron does not support <name>".
"""

from __future__ import annotations

from datetime import timedelta

import torch.distributed as dist

from . import _C

BACKEND_NAME = "neuron"


def _create_backend(store: dist.Store, rank: int, size: int, timeout: timedelta) -> object:
    host = dist.ProcessGroupGloo(dist.PrefixStore(f"{BACKEND_NAME}/", store), rank, size, timeout)
    return _C._create_c10d_backend(host, rank, size)


def register() -> None:
    """Registers the backend once per process; a second call is a no-op."""
    if getattr(dist.Backend, BACKEND_NAME.upper(), None) is not None:
        return
    # devices must be a list: a bare string is iterated character by character.
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["neuron"])
