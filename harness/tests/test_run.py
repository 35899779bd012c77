"""`neuron-conform run` end to end, with a backend whose planted kernels crash, hang and lie."""


from conform_cli import cli, evidences, outcomes, results, routes, run_record, runs

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
    assert evidence["ops/cos/float32/forward"].get("compiling_seconds", 0) < 1  # a hang, not a compile
    fail = evidence["ops/tan/float32/forward"]
    assert fail["max_abs_error"] > 0 and fail["first_failing_sample"] == 0 and "sample" in fail
    assert list(results(db)["ops/erfinv/float32/forward"]["fallback_ops"]) == ["aten::erfinv.out"]
    assert routes(db, "ops/add/float32/forward")["aten::add.Tensor"] == "native"
    run = run_record(db)
    assert run["status"] == "complete" and run["backend_module"] == "planted_backend"
    assert run["backend_version"].endswith("+planted")
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
        (["--timeout", "nan"], "--timeout nan must be a number of seconds above 0"),
        (["--compile-timeout", "-1"], "--compile-timeout -1 must be a number of seconds from 0"),
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
    [evidence] = evidences(db).values()
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


def test_query_prints_each_run_and_its_results_as_recorded(db, tmp_path):
    """`query`, the one reader of results for scripts and tests: the run's record and every result
    in planned order, counts that agree with them, every run with --runs; bad input is one line."""
    cli("run", "--ops", "^(add|mul|erfinv)$", "--dtypes", "float32", "--checks", "forward", "--label", "first",
        "--db", str(db))
    cli("run", "--ops", "^add$", "--dtypes", "float32", "--checks", "forward,out", "--db", str(db))
    first, second = runs(db)
    assert first["label"] == "first" and second["label"] is None and first["id"] < second["id"]
    assert (first["planned"], first["recorded"], first["status"]) == (3, 3, "complete")
    assert first["suite"] == "ops" and first["duration_seconds"] > 0
    assert first["backend_module"] == second["backend_module"] != "" and first["device"] == second["device"] != ""
    record = run_record(db, first["id"])
    assert {r["case"] for r in record["results"]} == {f"ops/{op}/float32/forward" for op in ("add", "mul", "erfinv")}
    counted: dict[str, int] = {}
    for r in record["results"]:
        counted[r["outcome"]] = counted.get(r["outcome"], 0) + 1
        assert set(r) == {"case", "outcome", "duration", "evidence", "native_ops", "fallback_ops", "host_only_ops"}
    assert counted == record["outcomes"] == first["outcomes"] == {"pass": 2, "fallback": 1}
    assert "aten::erfinv.out" in results(db, first["id"])["ops/erfinv/float32/forward"]["fallback_ops"]
    assert [r["case"] for r in run_record(db)["results"]] == ["ops/add/float32/forward", "ops/add/float32/out"]
    assert run_record(db, "previous")["id"] == first["id"]
    for args, says in [(("--db", str(db), "--run", "20990101-000000-none"), "20990101-000000-none"),
                       (("--db", str(tmp_path / "none.db")), "none.db")]:
        bad = cli("query", *args, check=False)
        assert bad.returncode == 2 and says in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
