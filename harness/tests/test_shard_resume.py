"""Sharding, merging, resuming a killed run, and two runs sharing one DB."""

import os
import signal
import subprocess
import time

from conform_cli import CLI, HERE, cli, outcomes, recorded, run_record, runs

SLICE = ["--ops", "^(add|mul|sub|div|abs|neg)$", "--dtypes", "float32,bfloat16", "--checks", "forward,out"]


def test_two_shards_merged_equal_one_unsharded_run(tmp_path):
    whole, a, b, merged = (tmp_path / n for n in ("whole.db", "a.db", "b.db", "merged.db"))
    cli("run", *SLICE, "-j", "2", "--db", str(whole))
    cli("run", *SLICE, "-j", "1", "--shard", "1/2", "--db", str(a))
    cli("run", *SLICE, "-j", "1", "--shard", "2/2", "--db", str(b))
    shard_a, shard_b = set(outcomes(a)), set(outcomes(b))
    assert shard_a and shard_b and not shard_a & shard_b
    result = cli("merge", str(a), str(b), "-o", str(merged))
    assert "2 input run(s)" in result.stdout
    assert outcomes(merged) == outcomes(whole)
    assert [r["status"] for r in runs(merged)] == ["complete"]
    # shards of different backends do not merge
    other = tmp_path / "other.db"
    cli("run", "--ops", "^add$", "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
        "--db", str(other))
    bad = cli("merge", str(a), str(other), "-o", str(tmp_path / "bad.db"), check=False)
    assert bad.returncode != 0 and "backend module differs" in bad.stderr
    dup = cli("merge", str(a), str(a), "-o", str(tmp_path / "dup.db"), check=False)
    assert dup.returncode != 0 and "is in more than one input" in dup.stderr


def _recorded_so_far(db) -> int:
    try:
        return recorded(db)
    except AssertionError:  # the run has not yet made the DB one
        return 0


def test_kill_minus_nine_then_resume_loses_and_duplicates_nothing(db):
    env = dict(os.environ, PYTHONPATH=str(HERE))
    # The planted backend's cos hangs: the run is certainly still going when it is killed.
    proc = subprocess.Popen([str(CLI), "run", "--ops", "^(abs|add|cos|mul|neg)$", "--dtypes", "float32",
                             "--checks", "forward,out", "--backend-module", "planted_backend", "--timeout", "600",
                             "-j", "1", "--db", str(db)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        if _recorded_so_far(db) >= 3:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    [run] = runs(db)
    run_id, planned, before = run["id"], run["planned"], run["recorded"]
    assert run["status"] == "running" and 3 <= before < planned
    cli("run", "--resume", run_id, "--timeout", "5", "--reruns", "0", "--db", str(db))
    run = run_record(db, run_id)
    assert run["recorded"] == planned and len({r["case"] for r in run["results"]}) == planned
    assert outcomes(db)["ops/cos/float32/forward"] == "timeout"
    assert run["status"] == "complete"
    again = cli("run", "--resume", "latest", "--db", str(db))  # nothing left: a no-op
    assert "0 of" in again.stderr


def test_two_runs_write_one_db_at_once(db):
    env = dict(os.environ, PYTHONPATH=str(HERE))
    procs = [subprocess.Popen([str(CLI), "run", "--ops", ops, "--dtypes", "float32", "-j", "1", "--db", str(db)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for ops in ("^(add|mul)$", "^(sub|div)$")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    recorded_runs = runs(db)
    assert len(recorded_runs) == 2 and all(run["status"] == "complete" for run in recorded_runs)
    for run in recorded_runs:
        assert run["recorded"] == run["planned"] > 0
