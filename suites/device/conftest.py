"""Shared helpers of the device suite: fresh interpreters for what must be seen from a clean start
(autoload, environment variables, out-of-memory with a small capacity)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import tempfile

# Keep the compile cache of test runs out of ~/.cache (set before torch loads the backend).
os.environ.setdefault("NEURONSIM_CACHE_DIR", tempfile.mkdtemp(prefix="neuronsim-test-cache-"))

import pytest  # noqa: E402
import torch  # noqa: E402


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a new interpreter of this venv with extra environment variables."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("NEURONSIM_") or k == "NEURONSIM_CACHE_DIR"}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(autouse=True)
def _restore_current_device():
    """Each test starts and ends on neuron:0 with the default engine modes."""
    torch.neuron.set_device(0)
    yield
    torch.neuron.set_device(0)
    import torch_neuronsim

    torch_neuronsim.set_fallback_mode("allow")
    torch_neuronsim.set_64bit_mode("downcast")
    torch_neuronsim.set_matmul_mode("fp32")
