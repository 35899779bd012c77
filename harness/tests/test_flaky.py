"""Flaky cases are named: a failure is rerun in fresh workers, and a pass on a rerun is `flaky`,
never a pass; every attempt is in the evidence; reports, the diff, the gate and skip lists count
it apart. The planted backend's sinh fails one time in three (the first of every three worker
processes), counted in PLANTED_STATE_DIR."""

from __future__ import annotations

import json

import junitparser
import pytest

from conform_cli import UPSTREAM_CHECKOUT, cli, outcomes, results

SINH = ["--ops", "^sinh$", "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
        "--no-skiplists", "-j", "1"]


@pytest.fixture
def flaky_sinh(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("PLANTED_STATE_DIR", str(state))


def evidence(db, case):
    return results(db)[case]["evidence"]


def test_a_failure_that_passes_on_a_rerun_is_flaky_with_every_attempt(db, flaky_sinh):
    result = cli("run", *SINH, "--db", str(db))
    assert outcomes(db) == {"ops/sinh/float32/forward": "flaky"}
    e = evidence(db, "ops/sinh/float32/forward")
    # the planted sinh computes on the host: its passing attempt matched host-only
    assert [a["outcome"] for a in e["attempts"]] == ["error", "host_only"]
    assert "one time in three" in e["attempts"][0]["message"]
    assert e["first_failure"]["outcome"] == "error"
    assert "1 cases: flaky 1" in result.stdout and "1 rerun(s), 1 flaky" in result.stdout
    latest = db.parent / "latest"
    cov = json.loads((latest / "coverage.json").read_text())
    assert cov["headline"]["outcomes"]["flaky"] == 1 and cov["headline"]["outcomes"]["pass"] == 0
    assert cov["subjects"][0]["status"] != "native"  # never a pass
    assert "| `ops/sinh/float32/forward` | flaky | passed only on a rerun; first attempt error" in \
        (latest / "summary.md").read_text()
    # JUnit (Surefire's convention): a passing testcase with its first failure as <flakyFailure>.
    suite = next(iter(junitparser.JUnitXml.fromfile(str(latest / "junit.xml"))))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (1, 0, 0, 0)
    assert '<flakyFailure type="error" message="passed only on a rerun' in (latest / "junit.xml").read_text()


def test_reruns_zero_keeps_the_first_failure(db, flaky_sinh):
    cli("run", *SINH, "--reruns", "0", "--db", str(db))
    assert outcomes(db) == {"ops/sinh/float32/forward": "error"}
    assert "attempts" not in evidence(db, "ops/sinh/float32/forward")


def test_a_case_that_always_fails_is_rerun_and_stays_a_failure(db):
    cli("run", "--ops", "^tan$", "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
        "--no-skiplists", "--reruns", "1", "--db", str(db))
    assert outcomes(db) == {"ops/tan/float32/forward": "fail"}
    assert [a["outcome"] for a in evidence(db, "ops/tan/float32/forward")["attempts"]] == ["fail", "fail"]


def test_a_case_the_suite_skips_is_not_rerun(db):
    result = cli("run", "--suite", "upstream", "--pytorch-test-dir", str(UPSTREAM_CHECKOUT), "--test-files",
                 "test_neuron_generic", "--ops", "TestGeneric", "--checks", "test_skips_itself,test_cuda_only",
                 "--reruns", "2", "-j", "1", "--db", str(db))
    generic = "upstream/test_neuron_generic.TestGeneric/-"
    assert outcomes(db) == {f"{generic}/test_skips_itself": "skip", f"{generic}/test_cuda_only": "skip"}
    assert not any("attempts" in evidence(db, case) for case in outcomes(db))
    assert "0 rerun(s)" in result.stdout


def test_repeat_runs_each_case_that_many_times(db):
    cli("run", "--ops", "^add$", "--dtypes", "float32", "--checks", "forward", "--repeat", "3", "--db", str(db))
    assert outcomes(db) == {"ops/add/float32/forward": "pass"}
    assert [a["outcome"] for a in evidence(db, "ops/add/float32/forward")["attempts"]] == ["pass"] * 3


# An entry is flaky by its category, or by its `expect` where the category names the cause.
@pytest.mark.parametrize("flaky", [{"category": "flaky"}, {"category": "precision", "expect": "flaky"}])
def test_a_flaky_entry_expects_it_and_a_calm_night_is_no_news(db, flaky_sinh, tmp_path, flaky):
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "flaky.json").write_text(json.dumps({"entries": [
        {"suite": "ops", "subject": "sinh", "mode": "xfail", **flaky, "reason": "planted: 1 in 3"}]}))
    args = [a for a in SINH if a != "--no-skiplists"] + ["--skiplists", str(lists), "--strict"]
    cli("run", *args, "--db", str(db))  # flaky: expected, so --strict is content
    assert outcomes(db) == {"ops/sinh/float32/forward": "xfail"}
    assert evidence(db, "ops/sinh/float32/forward")["observed_outcome"] == "flaky"
    # The next worker is the second of three: sinh passes at once, which is no news for a flaky entry.
    cli("run", *args, "--db", str(db))
    assert outcomes(db) == {"ops/sinh/float32/forward": "host_only"}  # the planted kernel computes on the host


def test_the_gate_and_the_diff_count_flaky_apart(db, tmp_path, monkeypatch):
    cli("run", *SINH, "--db", str(db))  # no PLANTED_STATE_DIR: sinh is correct
    baseline = tmp_path / "baseline.json"
    cli("gate", "--write-baseline", str(baseline), "--db", str(db))
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("PLANTED_STATE_DIR", str(state))
    cli("run", *SINH, "--db", str(db))  # the first worker fails, the rerun passes
    assert outcomes(db) == {"ops/sinh/float32/forward": "flaky"}
    diff = cli("diff", "previous", "latest", "--db", str(db)).stdout
    assert "now flaky (passed only when rerun) (1):\n  ops/sinh/float32/forward  fallback -> flaky" in diff
    assert "sinh  fallback -> partial" in diff  # a flaky subject is neither native nor failing
    gate = cli("gate", "--baseline", str(baseline), "--db", str(db), check=False)
    assert gate.returncode == 1 and "1 flaky case(s): failed, then passed when rerun" in gate.stdout
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"fail_on_flaky": False}))
    assert cli("gate", "--baseline", str(baseline), "--db", str(db), "--policy", str(policy),
               check=False).returncode == 0


def test_a_case_its_entry_expects_to_flake_is_no_news_to_the_gate_either_way(db, flaky_sinh, tmp_path):
    # An entry expecting flakiness (its outcome depends on the host, or on chance): one night's
    # expected failure and the next night's pass are both what it says, so the gate, judging
    # against a baseline from either, reports neither an improvement nor a regression.
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "host.json").write_text(json.dumps({"entries": [
        {"suite": "ops", "subject": "sinh", "mode": "xfail", "category": "precision", "expect": "flaky",
         "reason": "planted: fails in the first of every three workers"}]}))
    args = [a for a in SINH if a != "--no-skiplists"] + ["--skiplists", str(lists), "--db", str(db)]
    night = []
    for expected in ("xfail", "host_only", "xfail"):  # workers 1 (fails) and 2, then 3, then 4 (fails) and 5
        cli("run", *args)
        assert outcomes(db) == {"ops/sinh/float32/forward": expected}
        night.append(tmp_path / f"baseline{len(night)}.json")
        cli("gate", "--write-baseline", str(night[-1]), "--db", str(db))
    for baseline, run in ((night[0], "previous"), (night[1], "latest")):  # xfail -> pass, pass -> xfail
        gate = cli("gate", "--baseline", str(baseline), "--run", run, "--db", str(db), check=False)
        assert gate.returncode == 0 and "No change against the baseline" in gate.stdout, gate.stdout


@pytest.mark.parametrize("args, message", [
    (["--reruns", "-1"], "--reruns"),
    (["--reruns", "two"], "--reruns"),
    (["--repeat", "0"], "--repeat"),
    (["--repeat", "x"], "--repeat"),
])
def test_bad_reruns_and_repeat_exit_2_before_any_work(db, args, message):
    result = cli("run", "--ops", "^add$", *args, "--db", str(db), check=False)
    assert result.returncode == 2 and message in result.stderr
    assert not db.exists()
