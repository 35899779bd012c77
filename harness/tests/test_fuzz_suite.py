"""The fuzz suite (suites/fuzz): Hypothesis-drawn compositions of layouts, value scales and edge
shapes over each OpInfo's samples. It finds the planted layout defects without being told which
axis to look on, shrinks each to one transform, replays it with `repro`, and draws the same
examples again under the same seed."""

import json

from conform_cli import cli, evidences, outcomes

SLICE = ["--suite", "fuzz", "--ops", "^(neg|bmm|abs|add|mm)$", "--no-skiplists", "--reruns", "0", "-j", "2"]


def test_the_fuzzer_finds_and_shrinks_the_planted_layout_defects(db):
    cli("run", *SLICE, "--backend-module", "defects_backend", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    # neg reads its input as if contiguous; bmm reads a stride-0 operand as laid-out batches;
    # mm truncates a mismatched contraction (an edge shape the CPU refuses)
    assert got["fuzz/neg/float32/examples"] == "fail" and got["fuzz/bmm/float32/examples"] == "fail", got
    for case, layouts in (("fuzz/neg/float32/examples", {"noncontiguous", "permuted", "offset"}),
                          ("fuzz/bmm/float32/examples", {"expanded"})):
        found = evidence[case]
        assert len(found["chain"]) == 1 and found["chain"][0] in layouts, found  # shrunk to one transform
        assert found["variant"] == found["chain"][0] and isinstance(found["sample_index"], int)
        assert "strides" in found["sample"] and "index" in found["message"]  # the first differing element
        assert found["fuzz"]["examples_run"] >= 1 and found["fuzz"]["seed"] == 0
    assert got["fuzz/abs/float32/examples"] in ("pass", "fallback"), evidence["fuzz/abs/float32/examples"]
    # replayed: the same search finds the same shrunk example
    replay = cli("repro", "fuzz/bmm/float32/examples", "--db", str(db), check=False)
    assert replay.returncode == 1
    replayed = json.loads(replay.stdout[replay.stdout.index("{\n"):])
    assert replayed["evidence"]["chain"] == evidence["fuzz/bmm/float32/examples"]["chain"]


def test_the_real_backend_passes_and_the_same_seed_draws_the_same_examples(db):
    cli("run", *SLICE, "--db", str(db))
    first, got = evidences(db), outcomes(db)
    assert set(got.values()) <= {"pass", "fallback"}, {c: first[c].get("message") for c in got}
    for case, found in first.items():
        fuzz = found["fuzz"]
        assert fuzz["examples_run"] == fuzz["max_examples"] == 25 and not fuzz["budget_exhausted"], (case, fuzz)
    assert sum(first["fuzz/add/float32/examples"]["fuzz"]["transforms_drawn"].values()) > 0
    cli("run", *SLICE, "--db", str(db))
    again = evidences(db)
    assert {c: f["fuzz"]["transforms_drawn"] for c, f in again.items()} == \
           {c: f["fuzz"]["transforms_drawn"] for c, f in first.items()}
    cli("run", *SLICE, "--seed", "7", "--db", str(db))
    other = evidences(db)
    assert {c: f["fuzz"]["transforms_drawn"] for c, f in other.items()} != \
           {c: f["fuzz"]["transforms_drawn"] for c, f in first.items()}


def test_a_bad_budget_is_refused_before_any_case_runs(db):
    bad = cli("run", "--suite", "fuzz", "--suite-option", "seconds_per_op=0", "--db", str(db), check=False)
    assert bad.returncode == 2 and "seconds_per_op" in bad.stderr and "positive" in bad.stderr
