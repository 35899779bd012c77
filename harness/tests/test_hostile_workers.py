"""Workers that break the line protocol or eat memory (the planted suite in planted_suites/hostile):
each attack is recorded with a clear outcome, the worker is replaced, the calm case after it runs,
and the harness's own memory stays bounded while a worker writes a 100 MB line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conform_cli import REPO, cli, evidences, outcomes, results, runs

PLANTED_SUITES = Path(__file__).resolve().parent / "planted_suites"
VOCABULARY_CORE = [f["name"] for f in json.loads((REPO / "harness" / "vocabulary.json").read_text())["evidence_core"]]


def case(subject: str) -> str:
    return f"hostile/{subject}/-/misbehave"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("hostile") / "results.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURON_CONFORM_SUITES", str(PLANTED_SUITES))
        result = cli("run", "--suite", "hostile", "--db", str(db), "-j", "1", "--reruns", "0",
                     "--timeout", "120", "--max-worker-memory", "2G")
    return db, result


def test_every_attack_is_recorded_and_the_run_goes_on(hostile_run):
    db, result = hostile_run
    got = outcomes(db)
    assert len(got) == 28, got
    assert [r["status"] for r in runs(db)] == ["complete"]
    calm = {c: o for c, o in got.items() if "/calm_after_" in c}
    assert calm.pop(case("calm_after_fork_writes_later")) == "error"  # see below
    assert set(calm.values()) == {"pass"}, calm
    assert "memory limit 2 GiB each, 1 retired after a case" in result.stdout


@pytest.mark.parametrize("attack, outcome, says", [
    ("garbage_line", "error", "parse error"),
    ("invalid_utf8", "error", "parse error"),
    ("wrong_types", "error", "malformed result from worker"),
    ("other_case", "error", "worker answered for hostile/calm_after_other_case/-/misbehave"),
    ("huge_line", "error", "longer than the protocol's limit of 8 MiB"),
    ("floods_and_sleeps", "error", "longer than the protocol's limit of 8 MiB"),
    ("partial_line_exit", "crash", "worker exited with code 3"),
    ("closes_protocol", "crash", "worker exited with code"),
    ("allocates_forever", "crash", "exceeded the worker memory limit (2 GiB)"),
    ("device_allocates_forever", "crash", "exceeded the worker memory limit (2 GiB)"),
    ("device_out_of_memory", "error", "neuron out of memory"),
])
def test_an_attack_is_an_error_where_the_harness_saw_it_or_a_crash(hostile_run, attack, outcome, says):
    db, _ = hostile_run
    evidence = evidences(db)[case(attack)]
    assert outcomes(db)[case(attack)] == outcome
    assert says in evidence["message"], evidence
    if outcome == "error" and attack != "device_out_of_memory":
        assert evidence["where"] == "harness" and evidence["exception_type"] == "ProtocolError"


def test_evidence_whose_core_has_another_type_is_the_suites_error_naming_each_field(hostile_run):
    # The reports read the core by name: a field of another type would read as absent, unseen.
    db, _ = hostile_run
    evidence = evidences(db)[case("breaks_evidence_core")]
    assert outcomes(db)[case("breaks_evidence_core")] == "error"
    assert evidence["where"] == "harness" and evidence["exception_type"] == "EvidenceError"
    for name in VOCABULARY_CORE:
        assert f"{name} must be a" in evidence["message"], (name, evidence["message"])
    assert evidence["suite_evidence"]["kept"] == "a detail"  # what the suite said is not lost


def test_bytes_that_are_not_utf8_are_kept_readable(hostile_run):
    db, _ = hostile_run
    line = evidences(db)[case("invalid_utf8")]["line"]
    assert line.startswith('{"case": "') and "\ufffd" in line


def test_a_flood_is_cut_without_waiting_for_the_timeout(hostile_run):
    db, _ = hostile_run
    assert results(db)[case("floods_and_sleeps")]["duration"] < 30


def test_the_harness_holds_no_100_MB_line(hostile_run):
    db, _ = hostile_run
    peak_kb = evidences(db)[case("calm_after_huge_line")]["harness_peak_rss_kb"]
    assert peak_kb < 100 * 1024, f"harness peak RSS {peak_kb} kB after a 100 MB line"


def test_a_late_write_from_a_forked_child_names_the_case_that_forked_it_and_dies_with_its_worker(hostile_run):
    db, _ = hostile_run
    forked = evidences(db)[case("fork_writes_later")]
    assert outcomes(db)[case("fork_writes_later")] == "pass"
    victim = evidences(db)[case("calm_after_fork_writes_later")]
    assert victim["line"] == "a late line from a forked child"
    assert victim["previous_case_of_worker"] == case("fork_writes_later")
    stat = Path(f"/proc/{forked['child_pid']}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z", "the forked child outlived its worker"


def test_a_worker_grown_past_half_its_memory_limit_runs_no_further_case(hostile_run):
    db, _ = hostile_run
    got, evidence = outcomes(db), evidences(db)
    assert got[case("hoards")] == got[case("calm_after_hoards")] == "pass"
    assert evidence[case("hoards")]["pid"] != evidence[case("calm_after_hoards")]["pid"]
