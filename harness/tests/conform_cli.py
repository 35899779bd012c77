"""Helpers of the harness's integration tests: run the real CLI on small slices."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "build" / "neuron-conform"
HERE = Path(__file__).resolve().parent
# The bundled stand-in for a PyTorch checkout: upstream-style test files with planted outcomes.
UPSTREAM_CHECKOUT = HERE / "data" / "upstream"
# A backend unlike the bundled one (harness/tests/foreign_backend: test_any_backend.py says what).
FOREIGN = ("--backend-module", "foreign_backend")


def cli(*args: str, check: bool = True, timeout: float = 600, env: dict[str, str] | None = None,
        **popen) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env or {})}
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


# What a run recorded, read as scripts and CI read it: through `neuron-conform query`, never the
# DB's schema (test_architecture.py keeps it so), so that a migration of the store changes no test.

def runs(db: Path) -> list[dict[str, Any]]:
    """Every run's record (`query --runs`), oldest first; none when there is no DB."""
    return json.loads(cli("query", "--db", str(db), "--runs").stdout) if Path(db).exists() else []


def run_record(db: Path, run: str = "latest") -> dict[str, Any]:
    """One run's record and its results (`query --run`), in planned order."""
    return json.loads(cli("query", "--db", str(db), "--run", run).stdout)


EVERY_RUN = "*"  # as a run: the results of every run, oldest first, a newer result of a case replacing an older


def results(db: Path, run: str = "latest") -> dict[str, dict[str, Any]]:
    """The run's results by case id: outcome, duration, evidence, native_ops, fallback_ops."""
    if run == EVERY_RUN:
        return {case: r for each in runs(db) for case, r in results(db, each["id"]).items()}
    return {r["case"]: r for r in run_record(db, run)["results"]}


def outcomes(db: Path, run: str = "latest") -> dict[str, str]:
    return {case: r["outcome"] for case, r in results(db, run).items()}


def evidences(db: Path, run: str = EVERY_RUN) -> dict[str, dict]:
    """Every recorded case's evidence, by case id (of every run unless `run` names one)."""
    return {case: r["evidence"] for case, r in results(db, run).items()}


def routes(db: Path, case: str, run: str = "latest") -> dict[str, str]:
    """The aten ops a case ran on the device, each with its route (native, fallback)."""
    result = results(db, run)[case]
    return {**{op: "fallback" for op in result["fallback_ops"]}, **{op: "native" for op in result["native_ops"]}}


def fixture_run(name: str) -> dict[str, Any]:
    """A fixed run of tests/data/<name>.json, as `query --run` prints one, to edit and import()."""
    return json.loads((HERE / "data" / f"{name}.json").read_text())


def import_runs(db: Path, *documents: dict[str, Any]) -> Path:
    """Records runs, given as `query` prints them, through the store's writer (`import`): how a
    test plants a run, so that no test but the store's own knows the schema."""
    document = Path(db).with_name(f"{Path(db).stem}-import.json")
    document.write_text(json.dumps(list(documents)))
    cli("import", str(document), "--db", str(db))
    document.unlink()
    return Path(db)


def recorded(db: Path) -> int:
    """How many results the DB holds, over every run; 0 when there is no DB."""
    return sum(r["recorded"] for r in runs(db))
