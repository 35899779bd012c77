"""The defects the sizes suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): the tiling bugs accelerator kernels have, wrong only above a
threshold size that the OpInfo samples (a few to a few hundred elements) never reach. Opt-in (the
ops suite's cases must not meet them). Never imported by a real run."""

from __future__ import annotations

import torch

from suitelib.planting import Defect

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


DEFECTS = {
    "drops_last_chunk": Defect({"sum": _sum_dropping_last_chunk},
                               "a full reduction that drops its last partial chunk of 512 elements, for inputs of "
                               "more than 2048 elements", "tile4096 (sum)", opt_in=True),
    "drops_last_k_tile": Defect({"mm": _mm_without_last_k_tile},
                                "a matrix product that leaves out its last tile of 128 along the contraction, for "
                                "contractions longer than 256", "tile512 and up (mm)", opt_in=True),
}
