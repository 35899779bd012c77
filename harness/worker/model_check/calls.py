"""Calling the user's model: its inputs spread as it takes them, the tensors of its outputs."""

from __future__ import annotations

from typing import Any

from .fatal import Fatal


def call(model, inputs) -> Any:
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def first_tensor(tree):
    """The first floating-point tensor in a tree (or any tensor), looking inside model outputs."""
    import torch
    from torch.utils._pytree import tree_leaves

    if hasattr(tree, "to_tuple"):  # transformers' ModelOutput
        tree = tree.to_tuple()
    tensors = [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]
    floating = [t for t in tensors if t.is_floating_point()]
    return (floating or tensors or [None])[0]


def scalar_loss(output):
    loss = getattr(output, "loss", None)
    if loss is None:
        tensor = first_tensor(output)
        if tensor is None:
            raise Fatal("--train: the model's output has no tensor to take a loss of")
        loss = tensor.float().sum()
    return loss
