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


def _squeeze_dims_as_squeeze_dim(gm: torch.fx.GraphModule) -> bool:
    """aten.squeeze.dims(x, dims) -> one aten.squeeze.dim per dim, the highest first (so the
    others keep their index): torch-mlir has no lowering for the multi-dim form, which
    `torch.squeeze(x, (0, 2))` and models that squeeze several dimensions at once produce."""
    changed = False
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target != aten.squeeze.dims:
            continue
        source, dims = node.args[0], node.args[1]
        rank = source.meta["val"].dim() if "val" in source.meta else None
        if rank is None or any(not isinstance(d, int) for d in dims):
            continue
        squeezed, value = source, source.meta["val"]
        with gm.graph.inserting_before(node):
            for dim in sorted({d % rank if rank else 0 for d in dims}, reverse=True):
                squeezed = gm.graph.call_function(aten.squeeze.dim, (squeezed, dim))
                value = aten.squeeze.dim(value, dim)  # the lowering reads each node's type from it
                squeezed.meta.update({k: v for k, v in node.meta.items() if k != "tensor_meta"}, val=value)
        node.replace_all_uses_with(squeezed)
        gm.graph.erase_node(node)
        changed = True
    return changed


REWRITES = (_scalar_tensor_as_full, _squeeze_dims_as_squeeze_dim)


def legalize(gm: torch.fx.GraphModule) -> None:
    """Applies every rewrite in place."""
    if any([rewrite(gm) for rewrite in REWRITES]):
        gm.graph.lint()
        gm.recompile()
