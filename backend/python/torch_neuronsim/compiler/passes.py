"""Graph rewrites before lowering: forms of ATen ops that torch-mlir cannot lower to StableHLO,
replaced by equivalent forms it can (as a real compiler's legalization passes would). The
rewritten graph is also the one that runs, so what runs is what was lowered."""

from __future__ import annotations

import torch

aten = torch.ops.aten


def _scalar_tensor_as_full(gm: torch.fx.GraphModule) -> bool:
    """aten.scalar_tensor(v, dtype=...) -> aten.full([], v, dtype=...): torch-mlir leaves
    scalar_tensor's dtype argument unconverted ("failed to legalize 'torch.constant.int'"), and
    ATen's decompositions of masked_fill, where and clamp produce it in most models."""
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == aten.scalar_tensor.default:
            node.target = aten.full.default
            node.args = ([], *node.args)
            changed = True
    return changed


REWRITES = (_scalar_tensor_as_full,)


def legalize(gm: torch.fx.GraphModule) -> None:
    """Applies every rewrite in place."""
    if any([rewrite(gm) for rewrite in REWRITES]):
        gm.graph.lint()
        gm.recompile()
