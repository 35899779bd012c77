"""The dispatcher capture in C++ (capture_observer.cpp): a RecordFunction observer that keeps the
Python capture's account (dispatch_capture.py) at a fraction of its cost per op. A Python
TorchDispatchMode costs about 12 us an op before any code of ours, and an ops case runs
thousands of device ops.

The observer is built here, on first use, against the installed torch (its headers, its C++ ABI),
into a cache keyed by the source and the torch build (NEURON_CONFORM_CACHE_DIR, else
~/.cache/neuron-conform), so any torch a backend is built for gets its own. Where it cannot be built
or loaded (no C++ compiler, another kind of device) `load()` says why and the Python capture
serves; NEURON_CONFORM_CAPTURE=python chooses the Python capture outright.

    python native_capture.py    # builds it now (make build does), prints where it is
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import torch

from vocabulary import Kernel, Route

SOURCE = Path(__file__).resolve().with_name("capture_observer.cpp")
FLAGS = ("-std=c++20", "-O2", "-DNDEBUG", "-shared", "-fPIC", "-w")
_loaded: tuple[Any, str] | None = None  # (torch.ops.conform_capture or None, why not)


def cache_dir() -> Path:
    configured = os.environ.get("NEURON_CONFORM_CACHE_DIR")
    root = Path(configured) if configured else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neuron-conform"
    return root / "capture"


def _command(output: Path) -> list[str]:
    from torch.utils import cpp_extension

    includes = [f"-I{path}" for path in cpp_extension.include_paths()]
    libraries = cpp_extension.library_paths()
    return [*shlex.split(os.environ.get("CXX", "c++")), *FLAGS,
            f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}", *includes,
            str(SOURCE), "-o", str(output), *[f"-L{path}" for path in libraries],
            *[f"-Wl,-rpath,{path}" for path in libraries], "-lc10", "-ltorch_cpu"]


@functools.cache
def built() -> Path:
    """The observer's shared library for this torch, built if the cache has none (one process
    builds, the others wait for it). Raises RuntimeError with the compiler's words if it fails."""
    key = hashlib.sha256(SOURCE.read_bytes())
    key.update(" ".join([torch.__version__, str(Path(torch.__file__).parent), *FLAGS]).encode())
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / f"capture_observer-{key.hexdigest()[:16]}.so"
    if library.exists():
        return library
    with open(folder / f"{library.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if library.exists():  # another process built it while this one waited
            return library
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            output = Path(scratch) / library.name
            done = subprocess.run(_command(output), capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"building {SOURCE.name} failed ({done.returncode}): {done.stderr.strip()[-1500:]}")
            os.replace(output, library)  # whole or not at all, for the processes that wait
    return library


def load() -> tuple[Any, str]:
    """(the observer's ops, "") once built and loaded in this process, else (None, why not)."""
    global _loaded
    if _loaded is None:
        if os.environ.get("NEURON_CONFORM_CAPTURE", "native") == "python":
            _loaded = (None, "NEURON_CONFORM_CAPTURE=python")
        else:
            try:
                torch.ops.load_library(str(built()))
                _loaded = (torch.ops.conform_capture, "")
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                _loaded = (None, f"{type(exc).__name__}: {exc}")
    return _loaded


class NativeCapture:
    """The capture's interface (`with capture:`, `counts`, `clear()`) over the observer, for the
    PrivateUse1 device. It counts on the thread that enters it and on the threads that thread's
    state reaches (the autograd engine's device thread). The counts are the process's: a new
    capture starts them from zero."""

    _active = threading.local()  # .capture: the one counting on this thread, if any

    def __init__(self, ops: Any) -> None:
        self._ops = ops
        self._depth = 0
        ops.clear()

    def __enter__(self) -> NativeCapture:
        if self._depth == 0:
            self._ops.activate()
            NativeCapture._active.capture = self
        self._depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._ops.deactivate()
            NativeCapture._active.capture = None

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """{route: {overload: calls}} since clear(), as Capture.counts."""
        native, fallback, composite, host_only = self._ops.counts()
        return {Route.NATIVE: dict(native), Route.FALLBACK: dict(fallback), Kernel.COMPOSITE: dict(composite),
                Route.HOST_ONLY: dict(host_only)}

    def clear(self) -> None:
        self._ops.clear()

    @classmethod
    def pause_here(cls) -> NativeCapture | None:
        """Stops the observer counting on this thread, if one is: the capture to resume_here()."""
        capture = getattr(cls._active, "capture", None)
        return capture if capture is not None and capture._ops.deactivate() else None

    def resume_here(self) -> None:
        self._ops.activate()


if __name__ == "__main__":
    ops, why = load()
    print(built() if ops is not None else f"native capture unavailable: {why}",
          file=sys.stdout if ops is not None else sys.stderr)
    sys.exit(0 if ops is not None else 1)
