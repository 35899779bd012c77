"""`neuron-conform run` end to end, with a backend whose planted kernels crash, hang and lie."""

import json

from conform_cli import cli, evidences, outcomes, query

SLICE = ["--ops", "^(sin|cos|tan|add|mul|erfinv)$", "--dtypes", "float32", "--checks", "forward"]


def test_planted_faults_are_isolated_and_everything_else_recorded(db):
    # --reruns 0: the hanging case would wait out its timeout three times; reruns are test_flaky's
    result = cli("run", *SLICE, "--backend-module", "planted_backend", "--timeout", "8", "-j", "2", "--reruns", "0",
                 "--db", str(db))
    got = outcomes(db)
    assert got == {
        "ops/sin/float32/forward": "crash",
        "ops/cos/float32/forward": "timeout",
        "ops/tan/float32/forward": "fail",
        "ops/add/float32/forward": "pass",
        "ops/mul/float32/forward": "pass",
        "ops/erfinv/float32/forward": "fallback",
    }
    evidence = evidences(db)
    assert evidence["ops/sin/float32/forward"]["signal_name"] == "SIGSEGV"
    assert evidence["ops/cos/float32/forward"]["timeout_seconds"] == 8
    fail = evidence["ops/tan/float32/forward"]
    assert fail["max_abs_error"] > 0 and fail["first_failing_sample"] == 0 and "sample" in fail
    assert query(db, "SELECT op, route FROM op_events WHERE case_id = 'ops/erfinv/float32/forward' AND route = 'fallback'") \
        == [("aten::erfinv.out", "fallback")]
    assert ("aten::add.Tensor", "native") in query(db, "SELECT op, route FROM op_events WHERE case_id = 'ops/add/float32/forward'")
    run = query(db, "SELECT status, backend_module, backend_version, torch_version FROM runs")[0]
    assert run[0] == "complete" and run[1] == "planted_backend" and run[2].endswith("+planted")
    summary = result.stdout
    assert "6 cases: pass 2 · fallback 1 · fail 1 · crash 1 · timeout 1" in summary
    assert "worst failures:" in summary and "ops/tan/float32/forward" in summary


def test_bad_input_fails_fast_with_one_line(db, tmp_path):
    cases = [
        (["--ops", "^nothing_matches$"], "--ops '^nothing_matches$' matches no subject"),
        (["--ops", "("], "not a valid regular expression"),
        (["--shard", "3/2"], "--shard '3/2' is malformed"),
        (["--backend-module", "no_such_backend"], "cannot import backend module 'no_such_backend'"),
        (["--resume", "20990101-000000-dead"], "no run '20990101-000000-dead'"),
    ]
    for args, message in cases:
        result = cli("run", *args, "--db", str(db), check=False)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)
        assert result.stderr.strip().splitlines()[-1].startswith("neuron-conform: error:"), result.stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not a database" * 100)
    result = cli("run", "--ops", "^add$", "--db", str(corrupt), check=False)
    assert result.returncode != 0 and "is not a usable results database" in result.stderr
    assert corrupt.read_bytes() == b"not a database" * 100  # untouched
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = cli("run", "--ops", "^add$", "--db", str(blocker / "r.db"), check=False)  # unwritable location
    assert result.returncode != 0 and "cannot create directory" in result.stderr and str(blocker) in result.stderr


def test_non_finite_errors_survive_the_protocol(db):
    # The planted relu is wrong where the CPU has exact zeros: an infinite relative error, which
    # JSON cannot carry as a number; the case must still be recorded as the fail it is.
    cli("run", "--ops", "^nn.functional.relu$", "--dtypes", "float32", "--checks", "forward", "--no-skiplists",
        "--backend-module", "planted_backend", "--db", str(db))
    evidence = json.loads(query(db, "SELECT evidence FROM results")[0][0])
    assert outcomes(db) == {"ops/nn.functional.relu/float32/forward": "fail"}
    assert evidence["max_rel_error"] == "inf" and evidence["max_abs_error"] >= 13


def test_repro_prints_and_runs_one_case(db):
    cli("run", "--ops", "^tan$", "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
        "--db", str(db))
    printed = cli("repro", "ops/tan/float32/forward", "--db", str(db), "--print-only")
    assert "--backend-module planted_backend" in printed.stdout and "--repro ops/tan/float32/forward" in printed.stdout
    ran = cli("repro", "ops/tan/float32/forward", "--db", str(db), check=False)
    assert ran.returncode == 1  # the case fails, as recorded
    assert '"outcome": "fail"' in ran.stdout
    bad = cli("repro", "ops/tan/float32", "--db", str(db), check=False)
    assert bad.returncode != 0 and "has 3 field(s)" in bad.stderr
