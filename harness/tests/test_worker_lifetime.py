"""No process outlives its run: workers die with the harness, however the harness dies
(kill -9 included) and whatever they are doing (a kernel hanging in C)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from conform_cli import CLI, HERE, cli, outcomes


def processes_marked(mark: str) -> list[int]:
    """Processes whose environment carries `mark` (the harness's children inherit it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark.encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def kill_and_expect_no_survivor(harness: subprocess.Popen, mark: str) -> None:
    """kill -9 of the harness; within 10 s no process carrying `mark` may be left."""
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    deadline = time.time() + 10
    while time.time() < deadline and processes_marked(mark):
        time.sleep(0.1)
    left = processes_marked(mark)
    for pid in left:  # do not leak them into the next test, whatever the verdict
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"process(es) {left} outlived the harness"


def test_kill_minus_nine_of_the_harness_takes_a_hanging_worker_with_it(db):
    mark = f"neuron-conform-test-{uuid.uuid4()}"
    env = dict(os.environ, PYTHONPATH=str(HERE), LIFETIME_MARK=mark)
    # The planted backend's cos hangs in its kernel: the worker never reads its pipe again.
    harness = subprocess.Popen([str(CLI), "run", "--ops", "^cos$", "--dtypes", "float32", "--checks", "forward",
                                "--backend-module", "planted_backend", "--timeout", "600", "-j", "1",
                                "--db", str(db)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:  # until the serving worker has started (the listing one is gone)
        time.sleep(0.2)
        logs = list(db.parent.glob("runs/*/logs/worker-*.log"))
        if logs and "Traceback" not in logs[0].read_text() and len(processes_marked(mark)) >= 2:
            break
    time.sleep(3)  # well inside the hanging kernel
    workers = [pid for pid in processes_marked(mark) if pid != harness.pid]
    assert workers, "no worker was running"
    kill_and_expect_no_survivor(harness, mark)


def test_a_run_starts_python_once_the_listing_and_every_worker_fork_the_zygote(tmp_path, monkeypatch):
    """The imports of torch, the backend and the suite (seconds) are paid once a run: the listing
    and the serving workers are forks of the zygote."""
    log = tmp_path / "imports.log"
    monkeypatch.setenv("COUNTED_BACKEND_LOG", str(log))
    done = cli("run", "--ops", "^(abs|neg)$", "--checks", "forward", "--dtypes", "float32", "-j", "2",
               "--backend-module", "counted_backend", "--db", str(tmp_path / "r.db"))
    assert outcomes(tmp_path / "r.db") == {"ops/abs/float32/forward": "pass", "ops/neg/float32/forward": "pass"}, \
        done.stdout
    assert len(log.read_text().split()) == 1, f"the backend was imported by several processes: {log.read_text()}"
