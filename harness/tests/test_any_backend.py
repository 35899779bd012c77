"""The harness on a backend unlike the bundled one (docs/backends.md): `foreign_backend`, a device
named `foreign` with a boxed CPU fallback for everything but a few registered kernels (add and
mul right, mm 0.25 too much everywhere) and none of the optional functions: no op tracking, no
autocast policy, no compile-cache counters, no Dynamo backend, no c10d backend.

Every claim about native and fallback must come from the dispatcher here, and nothing the
bundled backend happens to offer may turn into this backend's error. The backend is built once
(harness/tests/foreign_backend, cached under build/) and only ever imported in the harness's own
processes: PrivateUse1 can be one backend per process, and pytest's is the bundled one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conform_cli import FOREIGN, cli, evidences, import_runs, outcomes, recorded, routes, run_record, runs



def harness_errors(db: Path) -> dict[str, str]:
    """Cases recorded as the harness's own error (its assumptions about the backend)."""
    return {case: e.get("message", "") for case, e in evidences(db).items() if e.get("where") == "harness"
            and e.get("exception_type") not in (None, "NoReference")}


@pytest.fixture(scope="module")
def ops_run(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("foreign") / "results.db"
    cli("run", *FOREIGN, "--ops", "^(add|mul|mm|sin|nn.functional.linear)$", "--dtypes", "float32",
        "--checks", "forward,backward", "--no-skiplists", "--reruns", "0", "--db", str(db),
        check=False)
    return db


def test_the_dispatcher_says_native_fallback_and_wrong(ops_run):
    got = outcomes(ops_run)
    # add and mul: registered kernels, every other op of theirs infrastructure the backend registers
    assert got["ops/add/float32/forward"] == "pass"
    assert got["ops/mul/float32/forward"] == "pass"
    assert got["ops/sin/float32/forward"] == "fallback"  # no kernel: the boxed fallback ran sin.out
    assert got["ops/mm/float32/forward"] == "fail"  # the registered kernel is wrong
    evidence = evidences(ops_run)
    assert evidence["ops/mm/float32/forward"]["max_abs_error"] == pytest.approx(0.25, abs=1e-3)
    assert {e["ops_source"] for e in evidence.values() if "ops_source" in e} == {"dispatcher"}
    assert routes(ops_run, "ops/sin/float32/forward")["aten::sin.out"] == "fallback"
    assert routes(ops_run, "ops/add/float32/forward")["aten::add.Tensor"] == "native"
    run = run_record(ops_run)
    assert (run["device"], run["backend_module"]) == ("foreign", "foreign_backend")
    # no memory statistics: the resource balance cannot be measured, and the run says so
    assert run["backend_info"]["device_memory"] is False


def test_no_case_is_the_harness_assumption(ops_run):
    assert harness_errors(ops_run) == {}
    assert "error" not in outcomes(ops_run).values()


def test_reports_count_fallback_from_the_dispatcher(ops_run, tmp_path):
    cli("report", "--db", str(ops_run), "--out", str(tmp_path))
    coverage = json.loads((tmp_path / "coverage.json").read_text())
    text = coverage["headline"]["text"]
    assert "pass natively" in text and " 0 match through the CPU fallback" not in text
    assert coverage["headline"]["outcomes"]["fallback"] >= 1
    subjects = {s["name"]: s for s in coverage["subjects"]}
    assert subjects["sin"]["status"] == "fallback" and "aten::sin.out" in subjects["sin"]["fallback_ops"]
    # add's forward is native; its backward fills and reduces through the fallback
    assert subjects["add"]["dtypes"]["float32"] == {"forward": "pass", "backward": "fallback"}


def test_api_table_names_the_fallback(ops_run, tmp_path):
    cli("api-compat", "--db", str(ops_run), "--out", str(tmp_path))
    table = json.loads((tmp_path / "torch_api_compatibility.json").read_text())
    rows = {e["name"]: e for s in table["sections"] for e in s["entries"]}
    assert rows["torch.sin"]["eager"]["status"] == "CPU_FALLBACK"
    assert "aten::sin.out (float32)" in rows["torch.sin"]["eager"]["fallback_ops"]
    # add's own kernel is the backend's; its backward's fill and reduction fall back
    add = rows["torch.add"]["eager"]
    assert add["status"] == "CPU_FALLBACK" and not any(op.startswith("aten::add") for op in add["fallback_ops"])
    assert rows["torch.mm"]["eager"]["status"] == "N"


def test_the_ledger_needs_no_dispositions_of_the_backend(ops_run):
    result = cli("ledger", "--db", str(ops_run), "--format", "json")
    ledger = json.loads(result.stdout)
    assert ledger["observable"] is True
    assert ledger["dispositions"].startswith("none")
    assert ledger["native"] >= 3 and ledger["fallback"] >= 1, ledger
    assert ledger["unreached_disposed"] == 0 and ledger["unreached_undisposed"] > 0


def test_runs_without_op_tracking_are_not_observable_to_the_ledger(ops_run, tmp_path):
    # The same runs as recorded before the capture, on a backend without tracking.
    recorded_before = [run_record(ops_run, run["id"]) for run in runs(ops_run)]
    for run in recorded_before:
        run["backend_info"].pop("op_sources", None)
        run["backend_info"].pop("tracking", None)
    old = import_runs(tmp_path / "old.db", *recorded_before)
    result = cli("ledger", "--db", str(old))
    assert result.stdout.startswith("not observable: run(s) ") and "overloads reached" not in result.stdout
    assert cli("ledger", "--db", str(old), "--fail-under", "1", check=False).returncode == 1


def test_the_compile_suite_refuses_in_one_line_without_a_dynamo_backend(tmp_path):
    db = tmp_path / "results.db"
    result = cli("run", "--suite", "compile", *FOREIGN, "--ops", "^add$", "--db", str(db), check=False)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "declares no Dynamo backend" in line]
    assert len(lines) == 1, result.stderr
    assert "--suite-option dynamo_backend=NAME" in lines[0]
    assert recorded(db) == 0
    # A name that no Dynamo backend has: the same one line, naming it.
    named = cli("run", "--suite", "compile", *FOREIGN, "--ops", "^add$", "--suite-option", "dynamo_backend=nowhere",
                "--db", str(db), check=False)
    assert named.returncode == 2 and "no Dynamo backend named 'nowhere' is registered" in named.stderr


def test_the_compile_suite_runs_with_the_backend_named_and_calls_nothing_native_unseen(tmp_path):
    db = tmp_path / "results.db"
    cli("run", "--suite", "compile", *FOREIGN, "--ops", "^(add|mm)$", "--dtypes", "float32", "--checks", "forward",
        "--suite-option", "dynamo_backend=aot_eager", "--no-skiplists", "--reruns", "0", "--db", str(db), check=False)
    got = outcomes(db)
    assert got["compile/mm/float32/forward"] == "fail"
    # The compiled graph is opaque to the capture and the backend tracks nothing: a match is
    # native_unknown, never pass.
    assert got["compile/add/float32/forward"] == "native_unknown"
    assert evidences(db)["compile/add/float32/forward"]["unobserved"]


def test_checks_that_need_declarations_are_skipped_with_the_reason(tmp_path):
    """A check's requirement the backend does not meet (a Dynamo backend, compile-cache counters)
    is the suite's skip, said one way by every suite: `suite_skip`, a message, nobody's fault (no
    `where`)."""
    db = tmp_path / "results.db"
    cli("run", "--suite", "hf", *FOREIGN, "--ops", "^LlamaForCausalLM$", "--dtypes", "float32",
        "--checks", "forward,static_shapes,compiled_forward", "--no-skiplists", "--reruns", "0", "--db", str(db),
        check=False)
    got, evidence = outcomes(db), evidences(db)
    for case in ("hf/LlamaForCausalLM/float32/static_shapes", "hf/LlamaForCausalLM/float32/compiled_forward"):
        assert got[case] == "skip" and evidence[case]["suite_skip"] is True and "where" not in evidence[case], \
            (case, evidence[case])
    assert got["hf/LlamaForCausalLM/float32/static_shapes"] == "skip"
    assert "compile-cache counters" in evidence["hf/LlamaForCausalLM/float32/static_shapes"]["message"]
    assert got["hf/LlamaForCausalLM/float32/compiled_forward"] == "skip"
    assert "declares no Dynamo backend" in evidence["hf/LlamaForCausalLM/float32/compiled_forward"]["message"]
    # Llama's linear layers reach mm or addmm; its softmax and norms fall back: never a pass.
    assert got["hf/LlamaForCausalLM/float32/forward"] in ("fallback", "fail")
    assert harness_errors(db) == {}


def test_modules_and_sizes_see_the_wrong_kernel(tmp_path):
    db = tmp_path / "results.db"
    cli("run", "--suite", "modules", *FOREIGN, "--ops", "^nn.Linear$", "--dtypes", "float32", "--no-skiplists",
        "--reruns", "0", "--db", str(db), check=False)
    linear = {case: o for case, o in outcomes(db).items()}
    assert "fail" in linear.values(), linear  # Linear without bias runs the wrong mm
    assert harness_errors(db) == {}
    sizes = tmp_path / "sizes.db"
    cli("run", "--suite", "sizes", *FOREIGN, "--ops", "^mm$", "--dtypes", "float32", "--no-skiplists",
        "--reruns", "0", "--db", str(sizes), check=False)
    assert set(outcomes(sizes).values()) == {"fail"}


def test_check_model_probe_finds_the_wrong_module(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(
        "import torch\n"
        "def build():\n"
        "    torch.manual_seed(0)\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4, bias=False))\n"
        "    return model, (torch.randn(2, 8),)\n")
    db = tmp_path / "results.db"
    cli("run", *FOREIGN, "--ops", "^add$", "--dtypes", "float32", "--checks", "forward", "--no-skiplists",
        "--db", str(db))
    result = cli("check-model", "--script", f"{script}:build", "--probe", *FOREIGN, "--db", str(db),
                 "--json", check=False)
    assert result.returncode >= 1, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["verdict"].startswith("wrong output"), verdict["verdict"]
    probe = verdict["probe"]
    assert probe["outcome"] == "fail" and probe["ops_source"] == "dispatcher"
    # Linear(bias=False) runs mm, the wrong kernel: module 2 is where the output starts to differ
    # (the first Linear runs addmm, which falls back and is right).
    assert probe["first_differing_module"]["module"] == "2"
    assert "aten::mm" in probe["native_ops"]
