"""The results DB under stress: the disk filling up mid-run stops the run with a clear message and
keeps every committed result, readable and resumable; reports and the dashboard read a run while
it writes and see a consistent snapshot (planted suite: planted_suites/bulky)."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conform_cli import CLI, cli


def query(db: Path, statement: str, *params):
    """The store's own stress test reads the file as SQLite does, below the store (integrity, each row once)."""
    with sqlite3.connect(db) as con:
        return con.execute(statement, params).fetchall()

PLANTED_SUITES = Path(__file__).resolve().parent / "planted_suites"
CASES = 300


@pytest.fixture(autouse=True)
def planted_suites(monkeypatch):
    monkeypatch.setenv("NEURON_CONFORM_SUITES", str(PLANTED_SUITES))


def test_a_full_disk_stops_the_run_keeps_what_was_committed_and_resume_finishes_it(tmp_path):
    db = tmp_path / "results.db"
    quota = 1_500_000  # bytes per file (RLIMIT_FSIZE): the run's 300 results of 16 KB need more

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (quota, quota))

    stopped = cli("run", "--suite", "bulky", "--db", str(db), "-j", "2", "--reruns", "0",
                  check=False, preexec_fn=small_disk)
    assert stopped.returncode != 0
    message = stopped.stderr
    assert "the run stopped:" in message and str(db) in message and "writing failed" in message, message
    assert "--resume" in message, message

    [(run_id,)] = query(db, "SELECT id FROM runs")
    with sqlite3.connect(db) as con:  # readable, intact
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = {case for (case,) in con.execute("SELECT case_id FROM results WHERE run_id = ?", (run_id,))}
    assert 0 < len(kept) < CASES

    cli("run", "--resume", run_id, "--db", str(db), "-j", "2")
    rows = query(db, "SELECT case_id, count(*) FROM results WHERE run_id = ? GROUP BY case_id", run_id)
    assert len(rows) == CASES and {n for _, n in rows} == {1}  # nothing lost, nothing twice
    assert query(db, "SELECT status FROM runs") == [("complete",)]


def run_recorded(db: Path) -> bool:
    """Whether the run is in the DB yet (the file may exist before its tables do)."""
    try:
        return db.exists() and query(db, "SELECT count(*) FROM runs")[0][0] > 0
    except sqlite3.OperationalError:
        return False


def test_reports_and_the_dashboard_read_a_run_while_it_writes(tmp_path):
    db = tmp_path / "results.db"
    env_suite = ["--suite", "bulky", "--db", str(db), "-j", "2", "--reruns", "0", "--case-seconds", "0.02"]
    writer = subprocess.Popen([str(CLI), "run", *env_suite], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        snapshots = []
        deadline = time.monotonic() + 120
        while writer.poll() is None and time.monotonic() < deadline:
            if not run_recorded(db):
                time.sleep(0.2)
                continue
            out = tmp_path / f"report{len(snapshots)}"
            report = cli("report", "--db", str(db), "--out", str(out), check=False)
            assert report.returncode == 0, report.stderr
            coverage = json.loads((out / "coverage.json").read_text())
            snapshots.append(coverage)
            dashboard = cli("dashboard", "--db", str(db), "--out", str(tmp_path / "dash"), check=False)
            assert dashboard.returncode == 0, dashboard.stderr
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    finally:
        writer.kill()
    assert len(snapshots) >= 2, "the run ended before a report could read it"
    recorded = [s["headline"]["recorded"] for s in snapshots]
    assert recorded == sorted(recorded) and recorded[0] < CASES  # some read mid-run, never backwards
    for s in snapshots:  # each snapshot agrees with itself
        assert sum(s["headline"]["outcomes"].values()) == s["headline"]["recorded"] == len(s["cases"])
