"""The device interface Dynamo looks up for `neuron` tensors (torch._dynamo.device_interface):
current device, streams, events and synchronization, from torch.neuron."""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device


class NeuronInterface(DeviceInterface):
    device = torch.neuron.device  # type: ignore[assignment]
    Event = torch.neuron.Event  # type: ignore[assignment]
    Stream = torch.neuron.Stream  # type: ignore[assignment]

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            torch.neuron.set_device(device)

        @staticmethod
        def current_device() -> int:
            return torch.neuron.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            return None

    current_device = staticmethod(torch.neuron.current_device)
    set_device = staticmethod(torch.neuron.set_device)
    device_count = staticmethod(torch.neuron.device_count)
    stream = staticmethod(torch.neuron.stream)
    current_stream = staticmethod(torch.neuron.current_stream)
    set_stream = staticmethod(torch.neuron.set_stream)
    synchronize = staticmethod(torch.neuron.synchronize)

    @staticmethod
    def is_available() -> bool:
        return torch.neuron.is_available()

    @staticmethod
    def exchange_device(device: int) -> int:
        previous = torch.neuron.current_device()
        torch.neuron.set_device(device)
        return previous

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return NeuronInterface.exchange_device(device)

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> Any:
        return "neuronsim"

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return False


def register() -> None:
    register_interface_for_device("neuron", NeuronInterface)
