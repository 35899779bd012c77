"""torch_neuronsim: TorchNeuron's `neuron` device, emulated on the CPU.

Importing the package registers PyTorch's PrivateUse1 backend under the name ``neuron``, the
device module ``torch.neuron`` and the ``Tensor.neuron()`` / ``is_neuron`` methods. With the
package installed, ``import torch`` does this by itself through the ``torch.backends`` entry
point (set ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` to turn that off).
"""


def _autoload() -> None:
    """Entry point of the ``torch.backends`` group: importing this module did the work.

    Defined before ``import torch``: when this package is imported first, torch's autoload
    imports it again while it is still initialising, and must find this function.
    """


import torch  # noqa: E402

from . import _C  # noqa: E402

# A malformed NEURONSIM_* variable is reported here, at import, naming the variable.
_C._validate_environment()

from . import neuron  # noqa: E402

torch.utils.rename_privateuse1_backend("neuron")
torch._register_device_module("neuron", neuron)
torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
# Autocast's default dtype on neuron is Trainium's, bfloat16 (torch's default for a PrivateUse1
# device is float16). The setting is per thread: this sets the importing thread's.
torch.set_autocast_dtype("neuron", torch.bfloat16)

__version__ = "0.1.0"

# The eager engine's introspection API, named as in TorchNeuron (torch_neuronx).
from ._C import (  # noqa: E402
    clear_op_tracking,
    compile_cache_stats,
    declared_compile_latency,
    get_64bit_mode,
    get_executed_ops,
    get_fallback_mode,
    get_fallback_ops,
    execution_stats,
    get_compile_latency,
    get_fusion,
    get_launch_blocking,
    get_matmul_mode,
    native_ops,
    set_64bit_mode,
    set_compile_latency,
    set_fallback_mode,
    set_fusion,
    set_launch_blocking,
    set_matmul_mode,
)

# The c10d backend for neuron tensors (torch_neuronsim/distributed.py), when this torch has
# torch.distributed; its collective counters are part of the introspection API.
import torch.distributed as _dist  # noqa: E402
from ._C import clear_collective_stats, get_collective_stats  # noqa: E402

# torch.compile(backend="neuron") (torch_neuronsim/compiler/): its statistics, named as in
# TorchNeuron. The backend itself is found through the torch_dynamo_backends entry point.
from .compiler import compile_stats, reset_compile_stats  # noqa: E402

def _finish_queued_work() -> None:
    """At exit, queued device work runs to its end before the interpreter goes; an error it left
    is reported, as nothing is left to raise it."""
    try:
        _C._synchronize_all()
    except Exception as error:  # noqa: BLE001  (reported: there is no caller left)
        import sys

        print(f"torch_neuronsim: queued device work failed before exit: {error}", file=sys.stderr)


import atexit as _atexit  # noqa: E402

_atexit.register(_finish_queued_work)

if _dist.is_available():
    from . import distributed as _distributed

    _distributed.register()

__all__ = [
    "native_ops",
    "get_executed_ops",
    "get_fallback_ops",
    "clear_op_tracking",
    "compile_cache_stats",
    "declared_compile_latency",
    "set_fallback_mode",
    "get_fallback_mode",
    "set_64bit_mode",
    "get_64bit_mode",
    "set_matmul_mode",
    "get_matmul_mode",
    "set_compile_latency",
    "get_compile_latency",
    "set_launch_blocking",
    "get_launch_blocking",
    "set_fusion",
    "get_fusion",
    "execution_stats",
    "get_collective_stats",
    "compile_stats",
    "reset_compile_stats",
    "clear_collective_stats",
    "environment_variables",
    "autocast_policy",
]


def autocast_policy() -> dict[str, object]:
    """What torch.autocast(device_type="neuron") does, as the backend registers it
    (csrc/aten/Autocast.cpp: PyTorch's CUDA lists): "dtype", the default autocast dtype
    (bfloat16, Trainium's), "supported_dtypes", and per policy the aten overloads it applies to:
    "lower_precision_fp" (run at the autocast dtype), "fp32" (run in float32),
    "fp32_set_opt_dtype" (float32 unless a dtype is given), "fp32_append_dtype", "promote" (the
    widest input dtype) and "banned" (refused under autocast)."""
    policy: dict[str, object] = {"dtype": torch.bfloat16, "supported_dtypes": neuron.get_amp_supported_dtype()}
    for name, overload in _C._autocast_policy():
        policy.setdefault(name, []).append(overload)  # type: ignore[union-attr]
    return policy


def environment_variables() -> dict[str, str]:
    """The NEURONSIM_* variables this build understands, with their meaning."""
    return dict(_C._known_variables())
