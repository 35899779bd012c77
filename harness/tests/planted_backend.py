"""A test-only backend: torch_neuronsim with planted faults, for the harness's own tests.

  aten::sin  crashes the worker (SIGSEGV)
  aten::cos  hangs
  aten::tan  returns wrong values (zeros)
  aten::relu returns |x| + 13: wrong where the CPU has exact zeros, so its relative error is inf
  aten::sinh fails one time in three: in the first of every three worker processes that call it
             (counted in a file under PLANTED_STATE_DIR; without it sinh is correct)
  aten::convolution_overrideable  not implemented, as on a backend without convolution kernels
             (PyTorch's own default: "convolution_overrideable not implemented")
  aten::expm1 with PLANTED_LATE set, right values but a late error, as an asynchronous device's
             queued op fails after its call returned:
               PLANTED_LATE=sync    the device's synchronize raises it
               PLANTED_LATE=sticky  every synchronize raises it from then on (a device left in
                                    an error state)
               PLANTED_LATE=launch  the next call of aten::log1p raises it (synchronize does not:
                                    a device whose errors surface at a later launch)
             With the launch-blocking switch on (set_launch_blocking(True)), expm1 raises at
             its call.
Everything else is torch_neuronsim, including its op tracking API, compile-cache counters and
launch-blocking switch.
"""

import fcntl
import os
import signal
import time
from pathlib import Path

import torch
import torch_neuronsim
from torch_neuronsim import (  # noqa: F401
    clear_op_tracking,
    compile_cache_stats,
    get_executed_ops,
    get_fallback_ops,
    get_launch_blocking,
    set_launch_blocking,
)

__version__ = torch_neuronsim.__version__ + "+planted"

_lib = torch.library.Library("aten", "IMPL")


def _crash(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)


def _hang(*args, **kwargs):
    time.sleep(3600)


def _wrong(self):
    return torch.zeros_like(self)


def _shifted(self):
    return self.abs() + 13


def _no_convolution(*args, **kwargs):
    raise NotImplementedError("convolution_overrideable not implemented. You are likely triggering this with "
                              "tensor backend other than CPU/CUDA/MKLDNN, if this is intended, please use "
                              "TORCH_LIBRARY_IMPL to override this function ")


_flaky_verdict: bool | None = None  # this process's: does sinh fail here?


def _flaky_sinh(self):
    global _flaky_verdict
    if _flaky_verdict is None:
        counter = Path(os.environ["PLANTED_STATE_DIR"]) / "sinh-processes"
        with open(counter, "a+") as f:  # one line per process, under a lock: processes race
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            index = len(f.readlines())
            f.write(f"{os.getpid()}\n")
        _flaky_verdict = index % 3 == 0
    if _flaky_verdict:
        raise RuntimeError("planted: sinh failed (one time in three)")
    return torch.sinh(self.cpu()).to(self.device)


_late: RuntimeError | None = None  # the error the device has not raised yet


def _late_expm1(self):
    global _late
    failure = RuntimeError(f"aten::expm1 failed on the device (planted: a queued op's error, input "
                           f"{list(self.shape)}); the error surfaced at a later call")
    if get_launch_blocking():
        raise failure
    _late = _late or failure
    return torch.expm1(self.cpu()).to(self.device)


def _raise_late() -> None:
    global _late
    if _late is not None:
        failure = _late
        if os.environ["PLANTED_LATE"] != "sticky":
            _late = None
        raise failure


def _launch_log1p(self):
    _raise_late()
    return torch.log1p(self.cpu()).to(self.device)


_device_synchronize = torch_neuronsim.neuron.synchronize


def _synchronize(device=None) -> None:
    _device_synchronize(device)
    _raise_late()


if os.environ.get("PLANTED_LATE"):
    _lib.impl("expm1", _late_expm1, "PrivateUse1")
    if os.environ["PLANTED_LATE"] in ("sync", "sticky"):
        torch_neuronsim.neuron.synchronize = _synchronize
    else:
        _lib.impl("log1p", _launch_log1p, "PrivateUse1")

_lib.impl("sin", _crash, "PrivateUse1")
if os.environ.get("PLANTED_STATE_DIR"):
    _lib.impl("sinh", _flaky_sinh, "PrivateUse1")
_lib.impl("cos", _hang, "PrivateUse1")
_lib.impl("tan", _wrong, "PrivateUse1")
_lib.impl("relu", _shifted, "PrivateUse1")
_lib.impl("convolution_overrideable", _no_convolution, "PrivateUse1")
