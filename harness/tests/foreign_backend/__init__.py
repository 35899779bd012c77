"""A test-only PyTorch backend, `foreign`, unlike the project's bundled one.

The harness's tests run the harness on it to check that what the harness reports holds for any
backend, not just the one it was written with. Importing this package builds (once, cached in
<repo>/build/foreign_backend) and loads foreign_backend.cpp, which gives PrivateUse1 host-memory
tensors on two devices, its own add and mul (right) and mm (wrong on purpose: 0.25 too much
everywhere), and runs every other op through PyTorch's CPU fallback. It offers nothing but the
device module below: no op tracking, no compiler, no distributed backend, so a harness learns what
runs natively only the way it would for any third-party backend.
"""

from __future__ import annotations

import fcntl
import os
import sys
import types
from pathlib import Path

if "torch" not in sys.modules:
    # Keep `import torch` from autoloading the bundled backend (a `torch.backends` entry point),
    # which would take PrivateUse1 first. Only for this import: child processes keep the setting.
    _autoload = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    try:
        import torch
    finally:
        if _autoload is None:
            del os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"]
        else:
            os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = _autoload
        del _autoload

import torch
from torch.utils import cpp_extension

__version__ = "0.1.0"

DEVICE = "foreign"
_DEVICE_COUNT = 2

_SOURCE = Path(__file__).resolve().with_name("foreign_backend.cpp")
_BUILD_DIR = Path(__file__).resolve().parents[3] / "build" / "foreign_backend"


def _load_extension() -> None:
    # cpp_extension rebuilds only when the source or flags changed (ninja is a no-op otherwise).
    # Processes loading at once take turns through its lock file, `lock` in the build directory,
    # which it makes on every load, but one killed while holding it leaves it behind and every
    # later load waits for it forever. So loads also take turns under an OS lock, which dies with
    # its holder: whoever holds that finds `lock` only if a dead loader left it, and removes it.
    _BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with open(_BUILD_DIR / "load.lock", "w") as turn:
        fcntl.flock(turn, fcntl.LOCK_EX)
        (_BUILD_DIR / "lock").unlink(missing_ok=True)
        cpp_extension.load(
            name="foreign_backend_ext",
            sources=[str(_SOURCE)],
            extra_cflags=["-O1"],
            build_directory=str(_BUILD_DIR),
            verbose=False,
            # A plain library of kernel registrations, loaded with torch.ops.load_library: no
            # Python bindings to compile.
            is_python_module=False,
        )


def _index(device: int | str | torch.device | None) -> int | None:
    if device is None or isinstance(device, int):
        return device
    return torch.device(device).index


def _device_module() -> types.ModuleType:
    """torch.foreign: what torch and user code ask of a device's runtime module."""
    module = types.ModuleType(f"torch.{DEVICE}")

    def is_available() -> bool:
        return True

    def device_count() -> int:
        return _DEVICE_COUNT

    # The current device is the C++ guard's, kept per thread, reached through torch.accelerator
    # (the foreign device is the accelerator once PrivateUse1 is renamed).
    def current_device() -> int:
        return torch.accelerator.current_device_index()

    def set_device(device: int | str | torch.device) -> None:
        index = _index(device)
        if index is not None:
            torch.accelerator.set_device_index(index)

    class device:
        """Makes a device current within a `with` block (torch.load and Storage.to use it)."""

        def __init__(self, device: int | str | torch.device | None) -> None:
            self._guard = torch.accelerator.device_index(_index(device))

        def __enter__(self) -> None:
            self._guard.__enter__()

        def __exit__(self, *exc_info: object) -> None:
            self._guard.__exit__(*exc_info)

    # Random ops run on the CPU through the fallback and draw from the CPU default generator,
    # so that is the device's generator too.
    def manual_seed(seed: int) -> None:
        torch.default_generator.manual_seed(int(seed))

    def manual_seed_all(seed: int) -> None:
        torch.default_generator.manual_seed(int(seed))

    def seed() -> None:
        torch.default_generator.seed()

    def seed_all() -> None:
        torch.default_generator.seed()

    def initial_seed() -> int:
        return torch.default_generator.initial_seed()

    def get_rng_state(device: int | str | torch.device = DEVICE) -> torch.Tensor:
        return torch.default_generator.get_state()

    def set_rng_state(new_state: torch.Tensor, device: int | str | torch.device = DEVICE) -> None:
        torch.default_generator.set_state(new_state)

    def _is_in_bad_fork() -> bool:
        return False

    def synchronize(device: int | str | torch.device | None = None) -> None:
        """Kernels run synchronously: nothing to wait for."""

    for function in (is_available, device_count, current_device, set_device, device, manual_seed,
                     manual_seed_all, seed, seed_all, initial_seed, get_rng_state, set_rng_state,
                     _is_in_bad_fork, synchronize):
        function.__module__ = module.__name__
        setattr(module, function.__name__, function)
    return module


def _register() -> None:
    taken = torch._C._get_privateuse1_backend_name()
    if taken not in ("privateuseone", DEVICE):
        raise ImportError(
            f"PrivateUse1 is already the '{taken}' backend in this process, so it cannot be "
            f"'{DEVICE}' too: set TORCH_DEVICE_BACKEND_AUTOLOAD=0 before importing torch, or "
            f"import {__name__} before torch")
    torch.utils.rename_privateuse1_backend(DEVICE)
    _load_extension()
    torch._register_device_module(DEVICE, _device_module())
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_storage=True)


_register()
del _register
