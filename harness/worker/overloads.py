"""The installed torch's aten overloads that have a CPU kernel: the rows of the ledger.

A device backend has to implement each of them or let it fall back to the CPU, so these are what
`neuron-conform ledger` counts as reached (an op event of some case in the DB) or not. Names are
spelt as the dispatcher spells them and as the backend's op tracking records them in
`op_events.op`: "aten::add.Tensor", and for a default overload the bare "aten::sgn".
"""

from __future__ import annotations

from dispatch_capture import DEVICE_KEY, kernel_kind
from vocabulary import Kernel


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


def device_composites(overloads: list[str], device_key: str = DEVICE_KEY) -> list[str]:
    """The overloads the device never sees itself: the backend registers no kernel for them, and
    a composite kernel of PyTorch (aten::acos -> aten::acos.out, aten::hypot_ -> aten::hypot.out;
    aten::mish_backward, CPU and CUDA kernels besides its math one, -> mul, tanh, ...) serves its
    dispatch key, so a call runs that decomposition on the device's kernels and the op
    events name only what it decomposed into. The ledger counts them apart (not_applicable to this
    backend, with that reason): no case could reach them."""
    return [name for name in overloads if kernel_kind(name, device_key) in (Kernel.COMPOSITE, Kernel.VIEW)]
