"""The installed torch's aten overloads that have a CPU kernel: the rows of the ledger.

A device backend has to implement each of them or let it fall back to the CPU, so these are what
`neuron-conform ledger` counts as reached (an op event of some case in the DB) or not. Names are
spelt as the dispatcher spells them and as the backend's op tracking records them in
`op_events.op`: "aten::add.Tensor", and for a default overload the bare "aten::sgn".
"""

from __future__ import annotations


def cpu_overloads(namespace: str = "aten") -> list[str]:
    """Every registered operator overload of `namespace` with a kernel for the CPU key, sorted.
    Other namespaces (quantized::, mkldnn::, c10d::, ...) are not the device's business."""
    import torch

    prefix = namespace + "::"
    return sorted(
        name
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith(prefix) and torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU")
    )
