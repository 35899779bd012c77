"""Fixtures of the bundled backend's own tests (helpers live in device_helpers.py). Sets a private compile
cache directory for the whole test session."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Keep the compile cache of test runs out of ~/.cache (set before torch loads the backend). The
# process that makes it (pytest's, whose xdist workers inherit it) removes it at exit.
if "NEURONSIM_CACHE_DIR" not in os.environ:
    os.environ["NEURONSIM_CACHE_DIR"] = tempfile.mkdtemp(prefix="neuronsim-test-cache-")
    atexit.register(shutil.rmtree, os.environ["NEURONSIM_CACHE_DIR"], ignore_errors=True)

import pytest  # noqa: E402
import torch  # noqa: E402


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
    torch_neuronsim.set_launch_blocking(False)
    torch_neuronsim.set_fusion(True)


@pytest.fixture
def unfused():
    """Queued ops run one executable each: for tests that count one op's compiles."""
    import torch_neuronsim

    torch_neuronsim.set_fusion(False)
    yield
    torch_neuronsim.set_fusion(True)
