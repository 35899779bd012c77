"""Fixtures of the harness's integration tests (helpers live in conform_cli.py)."""

from pathlib import Path

import pytest

from conform_cli import fixture_run, import_runs

# data/ holds inputs of the tests, such as upstream-style test files the upstream suite runs
# (one fails to import on purpose): they are not tests of this project.
collect_ignore = ["data"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


@pytest.fixture
def fixed_db(tmp_path: Path) -> Path:
    """A results DB holding one fixed run of the ops suite (data/ops_slice_run.json), for check-model."""
    return import_runs(tmp_path / "results.db", fixture_run("ops_slice_run"))
