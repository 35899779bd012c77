"""The distributed suite end to end: every case on 2 ranks against the bundled backend, planted
faults (a wrong reduction, unaveraged DDP gradients, wrong FSDP2 shards, a hung collective, a
crashing rank: suites/distributed/planted.py's classes, planted by defects_backend in the worker
and in every rank, which inherit DEFECTS_CLASSES), no rank outliving the harness, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

from conform_cli import CLI, HERE, cli, evidences, outcomes, runs
from test_worker_lifetime import kill_and_expect_no_survivor, processes_marked

PLANTED = ["--backend-module", "defects_backend", "--no-skiplists", "--reruns", "0"]
FAULTS = "wrong_reduction,hung_collective,crashing_rank,unaveraged_ddp,doubled_shards"


def test_every_case_on_two_ranks_against_the_bundled_backend(db):
    run = cli("run", "--suite", "distributed", "--strict", "-j", "2", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    assert len(got) == 68 and "distributed/all_reduce.sum/float32/world2" in got
    # the one expected failure: the backend refuses AVG on integers, by name
    assert got.pop("distributed/all_reduce.avg/int32/world2") == "xfail"
    assert set(got.values()) == {"pass"}, {case: o for case, o in got.items() if o != "pass"}
    assert "68 cases: pass 67 · xfail 1" in run.stdout
    reduced = evidence["distributed/all_reduce.sum/float32/world2"]
    # two ranks, one all_reduce of 4x6 float32 each, counted by the backend
    assert reduced["collectives"] == {"all_reduce": {"calls": 2, "bytes": 2 * 24 * 4}}
    assert reduced["world_size"] == 2 and reduced["max_abs_error"] == 0.0
    uneven = evidence["distributed/all_to_all_single.uneven/int32/world2"]
    assert uneven["collectives"]["all_to_all_single"]["calls"] == 2
    # DDP: gradients all-reduced once per bucket; FSDP2: all-gathers and reduce-scatters per step
    assert "all_reduce" in evidence["distributed/ddp.mlp/float32/world2"]["collectives"]
    fsdp = evidence["distributed/fsdp2.llama/float32/world2"]["collectives"]
    assert {"all_gather_into_tensor", "reduce_scatter_tensor"} <= set(fsdp)
    assert evidence["distributed/fsdp2.mlp/float32/world2"]["rtol"] == 1e-4
    # worlds are reused: started once per worker, not once per case
    starts = [e for e in evidence.values() if "world_start_seconds" in e]
    assert 1 <= len(starts) <= 2 + 1, len(starts)  # one per worker, and one after the expected error
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    assert coverage["headline"]["subject_text"].endswith("collectives and parallel APIs pass natively on 2 ranks "
                                                        "at every dtype")


def test_planted_faults_are_caught_and_the_run_goes_on(db):
    mark = f"neuron-conform-test-{uuid.uuid4()}"
    os.environ["LIFETIME_MARK"] = mark
    try:
        cli("run", "--suite", "distributed", *PLANTED, "--ops",
            r"^(all_reduce\.sum|broadcast|all_gather_into_tensor|ddp\.mlp|fsdp2\.mlp)$",
            "--dtypes", "float32,bfloat16,float16", "--timeout", "20", "-j", "1", "--db", str(db), check=False,
            env={"DEFECTS_CLASSES": FAULTS})
    finally:
        del os.environ["LIFETIME_MARK"]
    got, evidence = outcomes(db), evidences(db)
    # a wrong reduction on rank 1: the ranks disagree
    assert got["distributed/all_reduce.sum/float32/world2"] == "fail"
    wrong = evidence["distributed/all_reduce.sum/float32/world2"]
    assert wrong["rank"] == 1 and wrong["message"].startswith("rank 1 against rank 0")
    assert abs(wrong["max_abs_error"] - 1.0) < 1e-5
    # a rank that never joins the broadcast: the case times out, the world dies with the worker
    assert got["distributed/broadcast/bfloat16/world2"] == "timeout"
    # a rank that dies: a crash with its signal, the world killed
    crash = evidence["distributed/all_gather_into_tensor/float16/world2"]
    assert got["distributed/all_gather_into_tensor/float16/world2"] == "crash"
    assert crash["signal_name"] == "SIGSEGV" and "rank 1 died with signal 11 (SIGSEGV)" in crash["stderr_tail"]
    # DDP with gradients summed, not averaged; FSDP2 with doubled reduce-scatter shards
    assert got["distributed/ddp.mlp/float32/world2"] == "fail"
    assert got["distributed/fsdp2.mlp/float32/world2"] == "fail"
    assert "against the CPU" in evidence["distributed/fsdp2.mlp/float32/world2"]["message"]
    # the rest ran and passed, before and after the timeout and the crash
    for case in ("all_reduce.sum/bfloat16", "all_reduce.sum/float16", "broadcast/float32", "broadcast/float16",
                 "all_gather_into_tensor/float32", "all_gather_into_tensor/bfloat16"):
        assert got[f"distributed/{case}/world2"] == "pass", case
    assert processes_marked(mark) == [], "rank or worker processes outlived the run"


def test_kill_minus_nine_of_the_harness_takes_the_ranks_with_it(db):
    mark = f"neuron-conform-test-{uuid.uuid4()}"
    env = dict(os.environ, PYTHONPATH=str(HERE), LIFETIME_MARK=mark, DEFECTS_CLASSES="hung_collective")
    # rank 1 never joins the bfloat16 broadcast: rank 0 hangs in the collective
    harness = subprocess.Popen([str(CLI), "run", "--suite", "distributed", *PLANTED, "--ops", "^broadcast$",
                                "--dtypes", "bfloat16", "--timeout", "600", "-j", "1", "--db", str(db)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    ranks: list[int] = []
    while time.time() < deadline and len(ranks) < 2:
        time.sleep(0.2)
        ranks = [pid for pid in processes_marked(mark) if b"rank.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    time.sleep(3)  # inside the hung collective
    assert len(ranks) == 2, "the world did not start"
    # each rank imports defects_backend itself: DEFECTS_CLASSES reaches it with the rest of the environment
    assert all(b"\0DEFECTS_CLASSES=hung_collective\0" in b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
               for pid in ranks)
    kill_and_expect_no_survivor(harness, mark)


def test_bad_world_sizes_and_a_backend_without_collectives_stop_before_any_case(db, tmp_path, monkeypatch):
    low = cli("run", "--suite", "distributed", "--world-size", "1", "--db", str(db), check=False)
    assert low.returncode == 2 and "world_size 1: a world needs at least 2 ranks" in low.stderr
    high = cli("run", "--suite", "distributed", "--world-size", "3", "--db", str(db), check=False)
    assert high.returncode == 2
    assert "world_size 3: a world needs at least 2 ranks and one neuron device per rank; the backend reports " \
           "2 neuron devices" in high.stderr
    (tmp_path / "no_collectives_backend.py").write_text(
        "import torch.distributed as dist\nimport torch_neuronsim\nfrom torch_neuronsim import *  # noqa\n"
        "del dist.Backend.default_device_backend_map['neuron']\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    bare = cli("run", "--suite", "distributed", "--backend-module", "no_collectives_backend", "--db", str(db),
               check=False)
    assert bare.returncode == 2
    assert "the backend registers no c10d backend for its device 'neuron'" in bare.stderr
    assert bare.stderr.count("\n") <= 3, bare.stderr  # one line, not a traceback per case
    other = cli("run", "--suite", "optim", "--world-size", "2", "--db", str(db), check=False)
    assert other.returncode == 2 and "the optim suite has no option world_size (it takes: none" in other.stderr
    assert runs(db) == []  # nothing was run
