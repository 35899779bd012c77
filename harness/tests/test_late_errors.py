"""Late errors: an asynchronous device raises an op's error at a later call, and the harness charges
it to the case that queued the op, whichever call it surfaced at; no other verdict changes.

The planted backend's expm1 (planted_backend.py, PLANTED_LATE) returns right values and leaves an
error the device raises later: at its next synchronize (`sync`), at every synchronize from then on
(`sticky`), or at the next call of log1p, which synchronize never reports (`launch`). Run with the
backend's launch-blocking switch on, expm1 raises at its call. The scheduler's own account of the
protocol (late errors before a case and at a worker's exit) is tested against a stand-in worker in
harness/tests/cpp/test_scheduler.cpp.
"""

from __future__ import annotations

import pytest

from conform_cli import FOREIGN, cli, outcomes, results

# abs, exp2 and neg between: cases that must keep their verdicts
SHARD = ["--ops", "^(abs|exp2|expm1|log1p|neg)$", "--dtypes", "float32", "--checks", "forward",
         "--backend-module", "planted_backend", "--no-skiplists", "-j", "1"]
EXPM1, LOG1P = "ops/expm1/float32/forward", "ops/log1p/float32/forward"
CLEAN = {"ops/abs/float32/forward": "pass", "ops/exp2/float32/forward": "pass", EXPM1: "pass", LOG1P: "pass",
         "ops/neg/float32/forward": "pass"}
# The planted kernels compute on the host: matched, log1p's case is host_only.
LAUNCHED = {**CLEAN, LOG1P: "host_only", EXPM1: "error"}


def late(mode: str) -> dict[str, str]:
    return {"PLANTED_LATE": mode}


def test_without_the_planted_error_every_case_matches(db):
    cli("run", *SHARD, "--db", str(db))
    assert outcomes(db) == CLEAN


def test_an_error_raised_at_a_later_synchronize_is_the_case_that_queued_it(db):
    cli("run", *SHARD, "--db", str(db), env=late("sync"))
    assert outcomes(db) == {**CLEAN, EXPM1: "error"}  # abs, exp2, log1p, neg as without it
    e = results(db)[EXPM1]["evidence"]
    assert e["failing_op"] == "aten::expm1" and "surfaced at a later call" in e["message"]


def test_an_error_surfacing_in_a_later_case_is_found_by_rerunning_the_cases_before_it(db):
    """The error is raised by log1p's call, inside log1p's case: log1p fails, then passes alone;
    the cases its worker ran before are rerun alone with every op run at its call, and expm1, the
    one that fails so, takes the error. log1p keeps its own verdict; no other case changes."""
    result = cli("run", *SHARD, "--db", str(db), env=late("launch"))
    assert outcomes(db) == LAUNCHED
    guilty = results(db)[EXPM1]["evidence"]
    assert guilty["failing_op"] == "aten::expm1"
    assert guilty["surfaced_at"] == LOG1P
    assert guilty["outcome_before"] == "host_only"
    assert guilty["attributed_by"] == "rerun alone, every device op run at its call"
    assert "aten::expm1 failed on the device" in guilty["late_error"]["message"]
    met = results(db)[LOG1P]["evidence"]["met_late_error"]
    assert met["of"] == EXPM1 and met["outcome"] == "error"
    assert "late errors: 1 raised outside the case that queued the work, 1 found" in result.stdout
    # the reports count the amended result
    assert "error 1" in result.stdout.split("cases:")[1].splitlines()[0]


def test_a_device_left_failing_retires_its_worker_and_the_next_case_gets_a_fresh_one(db):
    result = cli("run", *SHARD, "--reruns", "0", "--db", str(db), env=late("sticky"))
    assert outcomes(db) == {**CLEAN, EXPM1: "error"}
    assert "aten::expm1 failed" in results(db)[EXPM1]["evidence"]["device_error_state"]
    assert "1 retired after a case" in result.stdout


def test_blocking_runs_every_op_at_its_call(db):
    """--blocking: the planted error is raised by expm1 itself, so nothing surfaces late."""
    result = cli("run", *SHARD, "--blocking", "--db", str(db), env=late("launch"))
    assert outcomes(db) == LAUNCHED
    e = results(db)[EXPM1]["evidence"]
    assert e["failing_op"] == "aten::expm1" and "surfaced_at" not in e
    assert "met_late_error" not in results(db)[LOG1P]["evidence"]
    assert "late errors" not in result.stdout


def test_blocking_is_refused_for_a_backend_without_the_switch(db):
    result = cli("run", *FOREIGN, "--ops", "^abs$", "--dtypes", "float32", "--checks", "forward",
                 "--blocking", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "declares no launch-blocking switch (set_launch_blocking()" in result.stderr


@pytest.mark.parametrize("mode", ["sync", "launch"])
def test_repro_blocking_names_the_failing_op_at_its_call(mode):
    result = cli("repro", EXPM1, "--backend-module", "planted_backend", "--blocking", check=False,
                 env=late(mode))
    assert result.returncode == 1
    assert "aten::expm1 failed on the device" in result.stdout
