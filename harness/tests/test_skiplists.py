"""Skip lists in a run: skip never runs a case, xfail and xpass, --strict, expect, bad lists."""

import json

from conform_cli import cli, outcomes, query

def slice_of(ops="^(sin|tan|add|mul)$"):
    return ["--ops", ops, "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
            "--timeout", "20"]


def write(tmp_path, entries, name="list.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"entries": entries}, indent=2))
    return path


def test_skip_xfail_xpass_and_strict(tmp_path, db):
    lists = write(tmp_path, [
        {"suite": "ops", "subject": "sin", "mode": "skip", "category": "crash", "reason": "planted segfault"},
        {"suite": "ops", "subject": "tan", "mode": "xfail", "category": "precision", "reason": "planted wrong result",
         "expect": "fail"},
        {"suite": "ops", "subject": "add", "mode": "xfail", "category": "unsupported_op", "reason": "stale on purpose"},
    ])
    result = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db))
    assert outcomes(db) == {"ops/sin/float32/forward": "skip", "ops/tan/float32/forward": "xfail",
                            "ops/add/float32/forward": "xpass", "ops/mul/float32/forward": "pass"}
    evidence = dict(query(db, "SELECT case_id, evidence FROM results"))
    skip = json.loads(evidence["ops/sin/float32/forward"])["skiplist"]
    assert skip["category"] == "crash" and skip["entry"].startswith(str(lists)) and skip["reason"] == "planted segfault"
    assert "workers:" in result.stdout and "crash(es)" in result.stdout
    assert "0 crash(es)" in result.stdout  # the skipped crash never ran
    assert "by skip-list category:" in result.stdout and "skip/crash 1" in result.stdout
    assert "ops/add/float32/forward passed unexpectedly" in result.stdout

    strict = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db), "--strict", check=False)
    assert strict.returncode == 1 and "--strict: 1 case(s) disagree" in strict.stderr


def test_expect_mismatch_is_news(tmp_path, db):
    lists = write(tmp_path, [
        {"subject": "tan", "mode": "xfail", "category": "unsupported_op", "reason": "expects an error",
         "expect": {"outcome": "error", "message": "not supported"}},
    ])
    result = cli("run", *slice_of("^tan$"), "--skiplists", str(lists), "--db", str(db), "--strict", check=False)
    assert result.returncode == 1
    assert outcomes(db) == {"ops/tan/float32/forward": "fail"}
    assert "failed differently: fail" in result.stdout


def test_a_bad_list_stops_the_run_before_any_case(tmp_path, db):
    lists = write(tmp_path, [{"subject": "add", "mode": "xfail", "category": "slow", "reason": ""}])
    result = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db), check=False)
    assert result.returncode == 2
    assert f"{lists}:" in result.stderr and "unknown category 'slow'" in result.stderr
    assert "missing 'reason'" in result.stderr and "nothing was run" in result.stderr
    assert query(db, "SELECT COUNT(*) FROM results") == [(0,)]
    assert cli("run", *slice_of("^mul$"), "--no-skiplists", "--skiplists", str(lists), "--db", str(db)).returncode == 0
