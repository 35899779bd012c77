"""A test-only backend: torch_neuronsim with the tiling bugs accelerator kernels have, wrong only
above a threshold size, for harness/tests/test_sizes_suite.py. The OpInfo samples (a few to a few
hundred elements) never reach them; the sizes suite must.

  op        the defect
  aten::sum a full reduction that drops its last partial chunk of 512 elements, for inputs of
            more than 2048 elements
  aten::mm  a matrix product that leaves out its last tile of 128 along the contraction, for
            contractions longer than 256

Each kernel computes on the CPU (so it never calls itself) and returns device tensors.
Everything else is torch_neuronsim, including its op tracking API.
"""

from __future__ import annotations

import torch
import torch_neuronsim
from torch_neuronsim import clear_op_tracking, get_executed_ops, get_fallback_ops, native_ops  # noqa: F401

__version__ = torch_neuronsim.__version__ + "+tiles"

CHUNK, CHUNK_THRESHOLD = 512, 2048
K_TILE, K_THRESHOLD = 128, 256


def _sum_dropping_last_chunk(self, *, dtype=None):
    flat = self.cpu().reshape(-1)
    if flat.numel() > CHUNK_THRESHOLD and flat.numel() % CHUNK:
        flat = flat[: flat.numel() - flat.numel() % CHUNK]
    return torch.sum(flat, dtype=dtype).to(self.device)


def _mm_without_last_k_tile(self, mat2):
    a, b = self.cpu(), mat2.cpu()
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        return torch.mm(a, b)  # raises as the CPU does: only the tiling is planted
    k = a.shape[1]
    if k > K_THRESHOLD:
        k = (k - 1) // K_TILE * K_TILE
    return torch.mm(a[:, :k], b[:k]).to(self.device)


_lib = torch.library.Library("aten", "IMPL")
_lib.impl("sum", _sum_dropping_last_chunk, "PrivateUse1")
_lib.impl("mm", _mm_without_last_k_tile, "PrivateUse1")
