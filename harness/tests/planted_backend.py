"""A test-only backend: torch_neuronsim with planted faults, for the harness's own tests.

  aten::sin  crashes the worker (SIGSEGV)
  aten::cos  hangs
  aten::tan  returns wrong values (zeros)
  aten::relu returns |x| + 13: wrong where the CPU has exact zeros, so its relative error is inf
  aten::sinh fails one time in three: in the first of every three worker processes that call it
             (counted in a file under PLANTED_STATE_DIR; without it sinh is correct)
  aten::convolution_overrideable  not implemented, as on a backend without convolution kernels
             (PyTorch's own default: "convolution_overrideable not implemented")
Everything else is torch_neuronsim, including its op tracking API.
"""

import fcntl
import os
import signal
import time
from pathlib import Path

import torch
import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops  # noqa: F401

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


_lib.impl("sin", _crash, "PrivateUse1")
if os.environ.get("PLANTED_STATE_DIR"):
    _lib.impl("sinh", _flaky_sinh, "PrivateUse1")
_lib.impl("cos", _hang, "PrivateUse1")
_lib.impl("tan", _wrong, "PrivateUse1")
_lib.impl("relu", _shifted, "PrivateUse1")
_lib.impl("convolution_overrideable", _no_convolution, "PrivateUse1")
