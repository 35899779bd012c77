"""The optim suite: its optimizer inputs and ids, real outcomes against the bundled backend, and a
planted defect."""

from __future__ import annotations

import json

from conform_cli import cli, evidences, outcomes, suite_module


def test_optimizer_inputs_become_stable_variants():
    suite = suite_module("optim")
    assert suite.variant_of("default") == ""
    assert suite.variant_of("default & foreach") == "foreach"
    assert suite.variant_of("maximize, weight_decay & foreach") == "maximize_weight_decay_foreach"
    assert suite.variant_of("Tensor lr") == "tensor_lr"


def test_optimizers_against_the_bundled_backend(db):
    cli("run", "--suite", "optim", "--ops", r"^(AdamW|AdamW\.foreach|SparseAdam)$", "--no-skiplists",
        "--reruns", "0", "-j", "2", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    for subject in ("AdamW", "AdamW.foreach"):
        for check in ("step", "lr_scheduler", "state_dict", "load_state_dict"):
            assert got[f"optim/{subject}/float32/{check}"] in ("pass", "fallback"), (subject, check)
    foreach = evidence["optim/AdamW.foreach/float32/state_dict"]
    assert foreach["implementation"] == "foreach" and foreach["optimizer_input"] == "default & foreach"
    assert foreach["implementations_for_device"] == ["for-loop", "foreach"]
    assert "fused" in foreach["implementations_not_run"]  # AdamW's fused runs on cpu, cuda, mps only
    assert foreach["state_keys"] == ["exp_avg", "exp_avg_sq", "step"]
    assert evidence["optim/AdamW/float32/lr_scheduler"]["schedulers"] == [["StepLR", "ReduceLROnPlateau"]]
    # SparseAdam takes only sparse gradients, which the device does not have
    sparse = evidence["optim/SparseAdam/float32/step"]
    assert got["optim/SparseAdam/float32/step"] == "error" and sparse["stage"] == "step"
    assert "sparse tensors are not supported" in sparse["message"] and sparse["failing_op"]
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    assert coverage["headline"]["subject_text"].endswith("of 3 optimizers run natively with every check")
    assert "### Optimizers" in (db.parent / "latest" / "summary.md").read_text()


def test_a_planted_wrong_lerp_breaks_adams_update(db):
    cli("run", "--suite", "optim", "--ops", r"^(Adam|SGD)$", "--checks", "step,load_state_dict",
        "--backend-module", "defects_backend", "--no-skiplists", "--reruns", "0", "-j", "2",
        "--db", str(db), env={"DEFECTS_CLASSES": "far_lerp"})
    got, evidence = outcomes(db), evidences(db)
    assert got["optim/Adam/float32/step"] == "fail"
    assert got["optim/Adam/float32/load_state_dict"] == "fail"
    assert got["optim/SGD/float32/step"] in ("pass", "fallback")  # SGD does not lerp
    failed = evidence["optim/Adam/float32/step"]
    assert failed["compared"] == "parameters after step 1" and failed["step"] == 1
    assert failed["max_abs_error"] > failed["atol"]
