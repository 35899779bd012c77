"""A test-only backend: torch_neuronsim, noting in the file $COUNTED_BACKEND_LOG the pid of each
process that imports it (how many Python start-ups a run costs). Nothing else is changed."""

import os

import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops  # noqa: F401

__version__ = torch_neuronsim.__version__

with open(os.environ["COUNTED_BACKEND_LOG"], "a") as log:
    log.write(f"{os.getpid()}\n")
