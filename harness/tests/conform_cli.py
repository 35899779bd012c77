"""Helpers of the harness's integration tests: run the real CLI on small slices."""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType


REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "build" / "neuron-conform"
HERE = Path(__file__).resolve().parent
# The bundled stand-in for a PyTorch checkout: upstream-style test files with planted outcomes.
UPSTREAM_CHECKOUT = HERE / "data" / "upstream"


def cli(*args: str, check: bool = True, timeout: float = 600, **popen) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{HERE}{os.pathsep}{env.get('PYTHONPATH', '')}"
    result = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=timeout, env=env, **popen)
    if check and result.returncode != 0:
        raise AssertionError(f"neuron-conform {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
    return result


def suite_module(suite: str, module: str = "suite") -> ModuleType:
    """A suite's module, imported as the worker imports it: neuron_conform_suites.<suite>.<module>
    (harness/worker/suite_api.py), with the worker's modules importable."""
    worker = str(REPO / "harness" / "worker")
    if worker not in sys.path:
        sys.path.insert(0, worker)
    import suite_api

    suite_api.package()
    return importlib.import_module(f"{suite_api.PACKAGE}.{suite}.{module}")


def outcomes(db: Path, run: str | None = None) -> dict[str, str]:
    with sqlite3.connect(db) as con:
        if run is None:
            run = con.execute("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1").fetchone()[0]
        return dict(con.execute("SELECT case_id, outcome FROM results WHERE run_id = ?", (run,)).fetchall())


def query(db: Path, sql: str, *params):
    with sqlite3.connect(db) as con:
        return con.execute(sql, params).fetchall()


def evidences(db: Path) -> dict[str, dict]:
    """Every recorded case's evidence, by case id."""
    return {case: json.loads(e) for case, e in query(db, "SELECT case_id, evidence FROM results")}
