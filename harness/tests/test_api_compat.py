"""`neuron-conform api-compat` (docs/api-compat.md) on small runs of the ops and modules suites
against the bundled backend, checked row by row: a native op (add, with its method, in-place method
and the dtype it fails at), a fallback op (erfinv: its aten op named, and its alias), an op that
fails at every dtype it ran (abs at complex64: N), one skipped by a skip list (untested with the
list's reason), a module, an entry no case tested, and --against."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import conform_cli
from conform_cli import cli, outcomes


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("api")
    db = root / "results.db"
    lists = root / "lists.json"
    lists.write_text(json.dumps({"entries": [{"suite": "ops", "subject": "mul", "mode": "skip",
                                              "category": "unsupported_op", "reason": "planted: mul is skipped"}]}))
    common = ("--checks", "forward", "--reruns", "0", "--db", str(db))
    cli("run", "--ops", "^(add|erfinv)$", "--dtypes", "float32,complex64", *common)
    cli("run", "--ops", "^(abs|mul)$", "--dtypes", "complex64", "--skiplists", str(lists), *common)
    cli("run", "--suite", "modules", "--ops", "^nn.Linear$", "--dtypes", "float32", "--reruns", "0", "--db", str(db))
    ids = [r["id"] for r in conform_cli.runs(db)]
    return db, dict(zip(("ops_a", "ops_b", "modules"), ids))


def table(db: Path, out: Path, *args: str) -> tuple[dict[str, dict], dict]:
    printed = cli("api-compat", "--db", str(db), "--out", str(out), *args).stdout
    document = json.loads((out / "torch_api_compatibility.json").read_text())
    entries = {e["name"]: {**e, "section": s["name"]} for s in document["sections"] for e in s["entries"]}
    return entries, {"printed": printed, "document": document}


def test_each_row_says_what_the_evidence_says(runs, tmp_path):
    db, ids = runs
    rows, out = table(db, tmp_path, "--runs", ",".join(ids.values()))
    assert [r["id"] for r in out["document"]["runs"]] == list(ids.values())

    add = rows["torch.add"]
    assert add["section"] == "torch" and add["eager"]["status"] == "Y" and add["eager"]["dtypes"] == ["float32"]
    assert "not at complex64" in add["eager"]["detail"] and "complex64 is not supported" in add["eager"]["detail"]
    assert add["compile"] == {"status": "untested", "detail": "no run tests this mode", "dtypes": []}
    assert rows["torch.Tensor.add"]["eager"]["status"] == "Y" and rows["torch.Tensor.add"]["kind"] == "method"
    assert rows["torch.Tensor.add_"]["kind"] == "in-place method"

    for name in ("torch.erfinv", "torch.special.erfinv", "torch.Tensor.erfinv"):
        assert rows[name]["eager"]["status"] == "CPU_FALLBACK", name
        assert rows[name]["eager"]["fallback_ops"] == ["aten::erfinv.out (float32)"], name
    assert rows["torch.special.erfinv"]["section"] == "torch.special"

    for name in ("torch.abs", "torch.absolute"):  # its alias is judged by the same cases
        assert rows[name]["eager"]["status"] == "N", name
        assert rows[name]["eager"]["detail"].startswith("error at complex64: "), rows[name]
    mul = rows["torch.mul"]["eager"]
    assert mul == {"status": "untested", "detail": "skip list: planted: mul is skipped", "dtypes": []}
    assert rows["torch.sub"]["eager"] == {"status": "untested", "detail": "no case", "dtypes": []}
    linear = rows["torch.nn.Linear"]
    assert linear["section"] == "torch.nn" and linear["eager"]["status"] == "Y" and linear["kind"] == "module"
    private = [n for n in rows if n.startswith("torch.ops.")
               or any(p.startswith("_") and not p.endswith("__") for p in n.split("."))]
    assert private == [] and "torch.Tensor.__radd__" in rows  # operators are public API

    counts = next(s for s in out["document"]["sections"] if s["name"] == "torch")["counts"]["eager"]
    assert counts["Y"] >= 1 and counts["CPU_FALLBACK"] >= 1 and counts["N"] >= 2
    assert "torch.special" in out["printed"] and "table: " in out["printed"]

    markdown = (tmp_path / "torch_api_compatibility.md").read_text()
    assert "| `torch.erfinv` | function | CPU_FALLBACK: aten::erfinv.out (float32) | float32 |" in markdown
    with open(tmp_path / "torch_api_compatibility.csv", newline="") as f:
        csv_rows = {r["api"]: r for r in csv.DictReader(f)}
    assert len(csv_rows) == len(rows) and csv_rows["torch.abs"]["eager"] == "N"


def test_against_lists_what_changed(runs, tmp_path):
    db, ids = runs
    rows, out = table(db, tmp_path, "--runs", f"{ids['ops_a']},{ids['ops_b']}", "--against", ids["ops_a"])
    changes = {(c["name"], c["mode"]): (c["before"], c["after"]) for c in out["document"]["changes"]}
    assert changes[("torch.abs", "eager")] == ("untested", "N")
    assert ("torch.add", "eager") not in changes
    assert "## Changes" in (tmp_path / "torch_api_compatibility.md").read_text()


def test_bad_input_is_one_line(runs, tmp_path):
    db, _ = runs
    result = cli("api-compat", "--db", str(db), "--runs", "no-such-run", "--out", str(tmp_path), check=False)
    assert result.returncode == 2 and "no-such-run" in result.stderr
    assert not (tmp_path / "torch_api_compatibility.md").exists()


def test_a_feature_beyond_the_api_does_not_decide_its_status(tmp_path):
    """forward-mode AD fails on the device for every op; the ops suite names the checks that test
    the op itself, so add stays Y with its forward_ad cases failing."""
    db = tmp_path / "results.db"
    cli("run", "--ops", "^add$", "--dtypes", "float32", "--checks", "forward,forward_ad", "--no-skiplists",
        "--reruns", "0", "--db", str(db))
    assert outcomes(db) == {
        "ops/add/float32/forward": "pass", "ops/add/float32/forward_ad": "error"}
    rows, _ = table(db, tmp_path / "out")
    assert rows["torch.add"]["eager"]["status"] == "Y" and rows["torch.add"]["eager"]["dtypes"] == ["float32"]
