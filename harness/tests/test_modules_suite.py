"""The modules suite end to end: real outcomes against the bundled backend, and a planted defect."""

from __future__ import annotations

import json

from conform_cli import cli, evidences, outcomes


def test_modules_against_the_bundled_backend(db):
    cli("run", "--suite", "modules", "--ops", r"^nn\.(Linear|LSTM|BatchNorm2d)$", "--dtypes", "float32",
        "--no-skiplists", "--reruns", "0", "-j", "2", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    assert {case for case in got if case.startswith("modules/nn.Linear/")} == {
        "modules/nn.Linear/float32/forward", "modules/nn.Linear/float32/backward",
        "modules/nn.Linear/float32/noncontiguous", "modules/nn.Linear/float32/save_load"}  # no buffers: no state
    assert got["modules/nn.Linear/float32/forward"] == "pass"
    assert got["modules/nn.Linear/float32/backward"] == "pass"
    linear = evidence["modules/nn.Linear/float32/forward"]
    assert linear["inputs_compared"] == 3 and linear["tolerance_source"] == "torch.testing default"
    assert linear["rtol"] == 1.3e-6 and linear["max_abs_error"] == 0.0
    # LSTM needs a fused cell the backend's CPU fallback cannot run: an error naming the op
    lstm = evidence["modules/nn.LSTM/float32/forward"]
    assert got["modules/nn.LSTM/float32/forward"] == "error"
    assert lstm["failing_op"] == "aten::_thnn_fused_lstm_cell" and lstm["stage"] == "device"
    assert lstm["exception_type"] and lstm["modes"] == ["train", "eval"] and "where" not in lstm
    # BatchNorm2d runs natively, and its running statistics are updated in device memory
    assert got["modules/nn.BatchNorm2d/float32/forward"] == "pass"
    assert got["modules/nn.BatchNorm2d/float32/state"] == "pass"
    state = evidence["modules/nn.BatchNorm2d/float32/state"]
    assert {"running_mean", "running_var"} <= set(state["buffers_compared"])
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    assert coverage["headline"]["subject_text"].endswith("of 3 modules pass forward and backward natively at every dtype")
    assert "### Modules" in (db.parent / "latest" / "summary.md").read_text()


def test_a_planted_wrong_layer_norm_fails_its_modules(db):
    cli("run", "--suite", "modules", "--ops", r"^nn\.(LayerNorm|Linear|BatchNorm2d)$", "--dtypes", "float32",
        "--backend-module", "defects_backend", "--no-skiplists", "--reruns", "0", "-j", "2",
        "--db", str(db), env={"DEFECTS_CLASSES": "shifted_layer_norm,stale_running_stats"})
    got, evidence = outcomes(db), evidences(db)
    assert got["modules/nn.LayerNorm/float32/forward"] == "fail"
    assert got["modules/nn.LayerNorm/float32/noncontiguous"] == "fail"
    assert got["modules/nn.Linear/float32/forward"] == "pass"
    failed = evidence["modules/nn.LayerNorm/float32/forward"]
    assert failed["compared"] == "output" and abs(failed["max_abs_error"] - 0.25) < 1e-3
    assert failed["module_input"] == 0 and failed["mode"] == "train" and "Tensor-likes are not close" in failed["message"]
    # planted: batch norm's running statistics never reach the device buffers; only `state` sees it
    # (forward matches, host-only: the planted kernel computes on the host)
    assert got["modules/nn.BatchNorm2d/float32/forward"] == "host_only"
    assert got["modules/nn.BatchNorm2d/float32/state"] == "fail"
    state = evidence["modules/nn.BatchNorm2d/float32/state"]
    assert state["compared"] == "buffer running_mean" and state["max_rel_error"] == 1.0 and state["max_abs_error"] > 0
