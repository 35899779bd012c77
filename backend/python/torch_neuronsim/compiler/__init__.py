"""torch.compile on the neuron device. The Dynamo backend lives in backend.py, which the
torch_dynamo_backends entry point "neuron" names, so that `import torch` does not import Dynamo;
this package's top level is the statistics only."""

from .stats import compile_stats, reset_compile_stats

__all__ = ["compile_stats", "reset_compile_stats"]
