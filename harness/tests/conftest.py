"""Fixtures of the harness's integration tests (helpers live in conform_cli.py)."""

from pathlib import Path

import pytest


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"
