"""Helpers of the bundled backend's own tests: fresh interpreters for what must be seen from a clean start
(autoload, environment variables, out-of-memory with a small capacity)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


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
