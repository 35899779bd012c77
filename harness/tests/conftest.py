"""Fixtures of the harness's integration tests (helpers live in conform_cli.py)."""

from pathlib import Path

import pytest

# data/ holds inputs of the tests, such as upstream-style test files the upstream suite runs
# (one fails to import on purpose): they are not tests of this project.
collect_ignore = ["data"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"
