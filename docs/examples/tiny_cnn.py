"""An example model for `neuron-conform check-model --script docs/examples/tiny_cnn.py:model`."""

import torch
from torch import nn


def model():
    """Returns (model, example inputs), as check-model's --script expects."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * 4 * 4, 10),
        nn.LogSoftmax(dim=-1),
    )
    return net.eval(), (torch.randn(2, 3, 8, 8),)
