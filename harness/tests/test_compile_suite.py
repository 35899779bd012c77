"""The compile suite end to end: real outcomes against the bundled backend (a pass, a recompile
counted, a lowering failure naming the op, a graph break with its reason), planted compiler
faults (a miscompiled forward, a miscompiled backward, a graph that recompiles on a repeated
shape: suites/compile/planted.py's classes, planted by defects_backend), and a backend without a
Dynamo backend."""

from __future__ import annotations

import json

from conform_cli import cli, evidences, outcomes, runs

OPS = ["--ops", r"^(add|tanh|sigmoid|mul|lgamma|allclose|bernoulli)$", "--dtypes", "float32", "--reruns", "0", "-j", "2"]
COMPILER_FAULTS = {"DEFECTS_CLASSES": "miscompiles_forward,miscompiles_backward,forgets_graphs"}


def test_compile_cases_against_the_bundled_backend(db):
    cli("run", "--suite", "compile", *OPS, "--no-skiplists", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    for op in ("add", "tanh", "sigmoid", "mul"):
        assert got[f"compile/{op}/float32/forward"] == "pass", op
        assert got[f"compile/{op}/float32/backward"] == "pass", op
        assert got[f"compile/{op}/float32/recompile"] == "pass", op
    forward = evidence["compile/add/float32/forward"]
    assert forward["graphs"] == forward["inputs_compared"] == 3  # one static graph per sample
    assert forward["backend_compile_stats"]["graphs_compiled"] == 3 and forward["compile_seconds"] > 0
    recompile = evidence["compile/add/float32/recompile"]
    assert recompile["recompiles"] == 1 and recompile["graphs"] == 2
    backward = evidence["compile/tanh/float32/backward"]["backend_compile_stats"]
    assert backward["graphs_compiled"] == 2 * evidence["compile/tanh/float32/backward"]["inputs_compared"]
    # a random op's OpInfo seeds inside its call (wrapper_set_seed): the suite seeds both sides
    # before it instead, so the op compiles into one graph per sample and draws the CPU's numbers
    assert got["compile/bernoulli/float32/forward"] == "pass"
    assert evidence["compile/bernoulli/float32/forward"]["graphs"] == 3
    # torch-mlir cannot lower lgamma: a compile error naming the op
    lowering = evidence["compile/lgamma/float32/forward"]
    assert got["compile/lgamma/float32/forward"] == "error"
    assert lowering["stage"] == "lowering" and lowering["failing_op"] == "aten::lgamma"
    assert "aten::lgamma cannot be lowered to StableHLO" in lowering["message"]
    # allclose returns a Python bool: Dynamo cannot keep it in one graph
    broken = evidence["compile/allclose/float32/forward"]
    assert got["compile/allclose/float32/forward"] == "error" and broken["stage"] == "capture"
    assert broken["graph_breaks"][0].startswith("Data dependent operator")
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    assert coverage["headline"]["subject_text"].endswith("OpInfos compile into one graph and match the CPU at "
                                                        "every dtype and check")


def test_planted_compiler_faults_fail_their_checks(db):
    # It registers its Dynamo backend at import (no entry point of its own): the run names it.
    cli("run", "--suite", "compile", *OPS, "--backend-module", "defects_backend", "--no-skiplists",
        "--suite-option", "dynamo_backend=neuron", "--db", str(db), env=COMPILER_FAULTS)
    got, evidence = outcomes(db), evidences(db)
    # tanh miscompiled in forward graphs: forward fails (and so do its gradients)
    assert got["compile/tanh/float32/forward"] == "fail"
    assert abs(evidence["compile/tanh/float32/forward"]["max_rel_error"] - 0.01) < 1e-3
    # sigmoid's derivative miscompiled in backward graphs: only backward sees it
    assert got["compile/sigmoid/float32/forward"] == "pass"
    assert got["compile/sigmoid/float32/backward"] == "fail"
    # mul's graph is dropped after each call: a repeated shape compiles again
    assert got["compile/mul/float32/forward"] == "pass"
    assert got["compile/mul/float32/recompile"] == "fail"
    recompiled = evidence["compile/mul/float32/recompile"]
    assert recompiled["call"] == "first shape again" and recompiled["graphs"] == 2
    assert "static shapes need exactly 1" in recompiled["message"]
    for check in ("forward", "backward", "recompile"):
        assert got[f"compile/add/float32/{check}"] == "pass", check


def test_a_backend_without_a_dynamo_backend_stops_before_any_case(db, tmp_path, monkeypatch):
    (tmp_path / "eager_only_backend.py").write_text(
        "import torch._dynamo\nimport torch_neuronsim\nfrom torch_neuronsim import *  # noqa\n"
        "_listed = torch._dynamo.list_backends\n"
        "torch._dynamo.list_backends = lambda exclude_tags=(): [b for b in _listed(exclude_tags) if b != 'neuron']\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    result = cli("run", "--suite", "compile", "--backend-module", "eager_only_backend", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "the backend eager_only_backend declares no Dynamo backend" in result.stderr
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1, result.stderr
    assert runs(db) == []
