"""A test-only backend: torch_neuronsim with planted faults, for the harness's own tests.

  aten::sin  crashes the worker (SIGSEGV)
  aten::cos  hangs
  aten::tan  returns wrong values (zeros)
  aten::relu returns |x| + 13: wrong where the CPU has exact zeros, so its relative error is inf
Everything else is torch_neuronsim, including its op tracking API.
"""

import os
import signal
import time

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


_lib.impl("sin", _crash, "PrivateUse1")
_lib.impl("cos", _hang, "PrivateUse1")
_lib.impl("tan", _wrong, "PrivateUse1")
_lib.impl("relu", _shifted, "PrivateUse1")
