"""Fixtures of the harness's integration tests (helpers live in conform_cli.py)."""

import sqlite3
from pathlib import Path

import pytest

# data/ holds inputs of the tests, such as upstream-style test files the upstream suite runs
# (one fails to import on purpose): they are not tests of this project.
collect_ignore = ["data"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


@pytest.fixture
def fixed_db(tmp_path: Path) -> Path:
    """A results DB holding one fixed run of the ops suite (data/ops_slice_run.sql), for check-model."""
    db = tmp_path / "results.db"
    with sqlite3.connect(db) as con:
        con.executescript((Path(__file__).parent / "data" / "ops_slice_run.sql").read_text())
    return db
