"""A test-only backend: torch_neuronsim under another name, shipping one skip list of its own."""

import torch_neuronsim
from torch_neuronsim import (  # noqa: F401
    clear_op_tracking,
    compile_cache_stats,
    get_executed_ops,
    get_fallback_ops,
    native_ops,
)

__version__ = torch_neuronsim.__version__ + "+listed"
