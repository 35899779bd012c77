"""`neuron-conform ledger` on a tiny run of the ops suite (docs/ledger.md): the overloads the run
reached (native and fallback, each with a case), the shipped dispositions applied, the overloads a
composite kernel serves on the device, `--fail-under`, and a bad dispositions file refused with
its file and entry named. One run for the module: each starts a zygote importing torch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conform_cli import REPO, cli, run_record

DISPOSITIONS = REPO / "skiplists" / "ledger" / "dispositions.json"


@pytest.fixture(scope="module")
def run_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("ledger") / "results.db"
    # add runs natively on the bundled backend; acos reaches it as acos.out through the fallback
    # (its functional form is PyTorch's composite kernel on the device).
    cli("run", "--ops", "^(add|acos)$", "--dtypes", "float32", "--checks", "forward", "-j", "1",
        "--reruns", "0", "--db", str(db))
    return db


def ledger(db: Path, *args: str, check: bool = True):
    return cli("ledger", "--db", str(db), *args, check=check)


def rows(db: Path, *args: str) -> dict[str, dict]:
    out = json.loads(ledger(db, "--format", "json", *args).stdout)
    return {r["overload"]: r for r in out["rows"]}, out


def test_the_run_stores_the_overloads_with_a_cpu_kernel(run_db):
    info = run_record(run_db)["backend_info"]
    assert "aten::add.Tensor" in info["cpu_overloads"] and len(info["cpu_overloads"]) > 1000
    assert "aten::acos" in info["device_composite"] and "aten::add.Tensor" not in info["device_composite"]


def test_reached_overloads_name_their_route_and_a_case(run_db):
    by_name, out = rows(run_db)
    assert by_name["aten::add.Tensor"] == {"overload": "aten::add.Tensor", "status": "native",
                                           "case": "ops/add/float32/forward"}
    assert by_name["aten::acos.out"]["status"] == "fallback"
    assert by_name["aten::acos.out"]["case"] == "ops/acos/float32/forward"
    assert by_name["aten::acos"]["status"] == "composite"
    assert by_name["aten::mm"]["status"] == "unreached, no disposition"
    assert out["overloads_from"].startswith("run ")
    assert out["reached"] == out["native"] + out["fallback"] >= 2
    assert out["applicable"] == out["overloads"] - out["not_applicable"] - out["composite"]
    assert out["coverage_percent"] == pytest.approx(100 * out["reached"] / out["applicable"])


def test_the_shipped_dispositions_apply(run_db):
    by_name, out = rows(run_db)
    shipped = json.loads(DISPOSITIONS.read_text())["entries"]
    na = next(e for e in shipped if e["disposition"] == "not_applicable")
    unreached = next(e for e in shipped if e["disposition"] == "unreached")
    assert by_name[na["overloads"][0]] == {"overload": na["overloads"][0], "status": "not_applicable",
                                           "reason": na["reason"]}
    assert by_name[unreached["overloads"][0]]["status"] == "unreached"
    assert out["not_applicable"] == sum(len(e["overloads"]) for e in shipped if e["disposition"] == "not_applicable")


def test_fail_under_exits_1_below_the_percentage(run_db):
    low = ledger(run_db, "--summary", "--fail-under", "0.1")
    assert low.returncode == 0 and "applicable overloads reached" in low.stdout
    high = ledger(run_db, "--summary", "--fail-under", "99", check=False)
    assert high.returncode == 1 and "below --fail-under 99" in high.stderr
    assert ledger(run_db, "--fail-under", "101", check=False).returncode == 2


def test_a_bad_dispositions_file_is_refused_naming_file_and_entry(run_db, tmp_path):
    bad = tmp_path / "bad.json"
    entries = [
        {"disposition": "not_applicable", "reason": "quantized", "overloads": ["aten::quantize_per_tensor"]},
        {"disposition": "not_applicable", "overloads": ["aten::mkldnn_rnn_layer"]},
        {"disposition": "unreached", "reason": "r", "overloads": ["aten::no_such_op", "aten::quantize_per_tensor"]},
    ]
    bad.write_text('{"entries": [\n' + ",\n".join(json.dumps(e) for e in entries) + "]}\n")  # an entry a line
    result = ledger(run_db, "--dispositions", str(bad), check=False)
    assert result.returncode == 2
    lines = bad.read_text().splitlines()

    def at(text: str, nth: int = 0) -> str:  # "FILE:LINE:" of the nth line holding `text`
        return f"{bad}:{[i for i, line in enumerate(lines, 1) if text in line][nth]}:"

    # Each problem where it is: the entry's line, or the line of the name it is about.
    assert re.search(rf'{re.escape(at("aten::mkldnn_rnn_layer"))}\d+: missing "reason"', result.stderr), result.stderr
    assert re.search(rf"{re.escape(at('aten::no_such_op'))}\d+: 'aten::no_such_op' is no overload", result.stderr)
    assert re.search(rf"{re.escape(at('aten::quantize_per_tensor', 1))}\d+: 'aten::quantize_per_tensor' is listed "
                     rf"twice \(first at {re.escape(at('aten::quantize_per_tensor'))}\d+\)", result.stderr)
    assert "3 problem(s) in the dispositions file" in result.stderr
    lint = cli("ledger", "--lint", "--dispositions", str(bad), check=False)
    assert lint.returncode == 1 and 'missing "reason"' in lint.stderr


def test_the_shipped_dispositions_lint_clean():
    result = cli("ledger", "--lint")
    assert "clean" in result.stdout


def test_the_runs_report_shows_its_ledger(run_db):
    run_id = run_record(run_db)["id"]
    coverage = json.loads((run_db.parent / "runs" / run_id / "coverage.json").read_text())
    assert coverage["ledger"]["reached"] >= 2 and "applicable aten overloads reached" in coverage["ledger"]["text"]
    assert "ledger:" in coverage["headline"]["text"]
    assert "Ledger (`neuron-conform ledger`)" in (run_db.parent / "runs" / run_id / "summary.md").read_text()
