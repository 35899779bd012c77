"""The seed example: a Linear layer on the neuron device, then the device's state."""

import torch

model = torch.nn.Linear(10, 1).to("neuron")
input_data = torch.randn(1, 10, device="neuron")
print(model(input_data))

print(
    f"neuron devices: {torch.neuron.device_count()}, current: neuron:{torch.neuron.current_device()}, "
    f"memory allocated: {torch.neuron.memory_allocated()} B, reserved: {torch.neuron.memory_reserved()} B, "
    f"peak: {torch.neuron.max_memory_allocated()} B"
)
