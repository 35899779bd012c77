"""check-model against a small fixed DB (tests/data/ops_slice_run.json, imported): one run of the ops suite
over linear, addmm, mm, relu, softmax, lgamma, abs, complex, erfinv, add, mul, t, view, expand at
float32, complex64, int64 and bool, with erfinv at float32 skipped by a planted skip-list entry.
The models are in tests/data/check_models.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conform_cli import HERE, cli, fixture_run, import_runs

MODELS = HERE / "data" / "check_models.py"


def check(db: Path, *args: str, expect: int):
    result = cli("check-model", *args, "--db", str(db), check=False)
    assert result.returncode == expect, result.stdout + result.stderr
    return result


def verdicts(result) -> dict[str, str]:
    return {f"{o['op']}@{o['dtype']}": o["verdict"] for o in json.loads(result.stdout)["ops"]}


def test_a_script_model_gets_every_verdict_class_but_failing(fixed_db):
    result = check(fixed_db, "--script", f"{MODELS}:classifier", "--json", expect=1)
    got = verdicts(result)
    assert got["aten::addmm@float32"] == "native"
    assert got["aten::relu@float32"] == "native"
    assert got["aten::t@float32"] == "native"  # a view: not compiled, judged by its OpInfo
    assert got["aten::lgamma@float32"] == "fallback"  # its .out overload ran through the fallback
    assert got["aten::erfinv@float32"] == "skipped"
    assert got["aten::cumsum@float32"] == "untested"
    data = json.loads(result.stdout)
    assert data["verdict"] == ("runs with 2 op(s) on the CPU fallback: aten::erfinv, aten::lgamma; "
                               "1 op(s) the run never tested: aten::cumsum (--probe runs the model)")
    erfinv = next(o for o in data["ops"] if o["op"] == "aten::erfinv")
    assert erfinv["evidence"]["category"] == "unsupported_op" and "planted" in erfinv["evidence"]["reason"]
    cumsum = next(o for o in data["ops"] if o["op"] == "aten::cumsum")
    assert cumsum["kernel"] == "device"


def test_a_failing_op_blocks_the_model(fixed_db):
    result = check(fixed_db, "--script", f"{MODELS}:spectral", expect=2)
    assert "verdict: blocked by aten::abs, aten::complex" in result.stdout
    assert "ops/abs/complex64/forward: aten::abs: complex64 is not supported on neuron" in result.stdout
    md = check(fixed_db, "--script", f"{MODELS}:spectral", "--markdown", expect=2).stdout
    assert md.startswith("### check-model:") and "| `aten::abs` | complex64 | 1 | failing |" in md


def test_an_exported_program(fixed_db, tmp_path):
    import sys

    sys.path.insert(0, str(MODELS.parent))
    import check_models

    model, args = check_models.classifier()
    path = tmp_path / "classifier.pt2"
    torch.export.save(torch.export.export(model, args), str(path))
    result = check(fixed_db, "--exported", str(path), "--json", expect=1)
    got = verdicts(result)
    assert got["aten::lgamma@float32"] == "fallback" and got["aten::relu@float32"] == "native"
    # export keeps linear, a composite: replayed on the device it reaches addmm, which the run tested
    assert got["aten::linear@float32"] == "native"
    linear = next(o for o in json.loads(result.stdout)["ops"] if o["op"] == "aten::linear")
    assert "aten::addmm" in linear["evidence"]["reaches"]


def test_an_hf_architecture_at_full_size_on_meta_tensors(fixed_db):
    result = check(fixed_db, "--hf", "llama", "--full-size", "--train", "--json", expect=1)
    data = json.loads(result.stdout)
    assert data["model"]["architecture"] == "LlamaForCausalLM" and data["model"]["parameters"] > 6_000_000_000
    got = verdicts(result)
    assert got["aten::mm@float32"] == "native" and got["aten::mul.Tensor@float32"] == "native"
    assert got["aten::embedding_dense_backward@float32"] == "untested"  # backward ops are captured
    # the fixture's slice never ran embedding: a device kernel is a claim, not evidence
    assert "the run never tested" in data["verdict"] and "aten::embedding" in data["verdict"]


def test_probe_shows_a_planted_disagreement(fixed_db, tmp_path):
    agreed = check(fixed_db, "--script", f"{MODELS}:classifier", "--probe", expect=1)
    assert "the probe agrees with the prediction" in agreed.stdout
    # Planted: the run says addmm only ran through the fallback; the probe sees it run natively.
    run = fixture_run("ops_slice_run")
    for result in run["results"]:
        if "aten::addmm" in result["native_ops"]:
            result["fallback_ops"]["aten::addmm"] = result["native_ops"].pop("aten::addmm")
    planted = import_runs(tmp_path / "planted.db", run)
    result = check(planted, "--script", f"{MODELS}:classifier", "--probe", "--json", expect=1)
    probe = json.loads(result.stdout)["probe"]
    assert {"op": "aten::addmm", "predicted": "fallback", "observed": "native"} in probe["disagreements"]
    assert probe["outcome"] == "ran" and probe["max_abs_error"] == 0


def test_probe_train_runs_the_training_steps_and_says_what_compiling_costs(fixed_db):
    result = check(fixed_db, "--script", f"{MODELS}:classifier", "--probe", "--train", "--json", expect=1)
    probe = json.loads(result.stdout)["probe"]
    train = probe["train_step"]
    assert train["outcome"] == "ran" and train["autocast"] == "bfloat16" and train["optimizers_checked"] == ["foreach"]
    assert train["gradient_error_device"] <= 4 * max(train["gradient_error_cpu"], 2**-9)
    needed = probe["compile_cache"]
    assert needed["compiles"] + needed["disk_hits"] > 0 and "compile_seconds" in needed
    # at the backend's declared latency (3 s + 0.2 s per op): what the executables cost on the device,
    # whatever the emulated run itself paid (latency 0 here)
    estimate = probe["compile_estimate"]
    assert (estimate["base_seconds"], estimate["per_op_seconds"]) == (3.0, 0.2)
    assert estimate["seconds"] == pytest.approx(3.0 * needed["compiles"] + 0.2 * needed["compiled_ops"])
    assert estimate["cold_seconds"] == pytest.approx(estimate["seconds"] + 3.0 * needed["disk_hits"]
                                                     + 0.2 * needed["loaded_ops"])
    assert needed["compiled_ops"] + needed["loaded_ops"] >= needed["compiles"] + needed["disk_hits"]
    text = check(fixed_db, "--script", f"{MODELS}:classifier", "--probe", "--train", expect=1).stdout
    assert "training step (bfloat16 autocast, clipping, AdamW foreach): matched" in text
    assert "eager executables:" in text and "already in the backend's cache" in text
    assert f"at the backend's declared compile latency (3 s + 0.2 s per op), compiling them costs " \
           f"~{estimate['seconds']:.0f} s" in text


def test_compile_says_whether_a_model_compiles_into_one_graph(fixed_db):
    one = json.loads(check(fixed_db, "--script", f"{MODELS}:mlp", "--compile", "--json", expect=0).stdout)
    # what the graphs cost on a compiling device, from the backend's compile_stats()
    assert "graphs: 1 given to the backend: " in check(fixed_db, "--script", f"{MODELS}:mlp", "--compile",
                                                        expect=0).stdout
    assert one["compile"]["verdict"] == "compiles into one graph" and one["compile"]["graphs"] == 1
    assert one["compile"]["compile_estimate"]["seconds"] == pytest.approx(3.0 + 0.2 * one["compile"]["graph_ops"])
    assert one["compile"]["graph_ops"] >= 2  # the mlp's layers and activation
    assert one["compile"]["outcome"] == "compiled" and one["compile"]["max_abs_error"] < 1e-5
    assert one["verdict"].endswith("; torch.compile: compiles into one graph")
    # a print between the layers: two graphs, and the break's reason
    broken = check(fixed_db, "--script", f"{MODELS}:chatty", "--compile", "--json", expect=1)
    compiled = json.loads(broken.stdout)["compile"]
    assert compiled["graphs"] == 2 and compiled["verdict"].startswith("compiles into 2 graphs")
    assert any("print" in reason for reason in compiled["graph_breaks"]), compiled["graph_breaks"]
    # lgamma: torch-mlir cannot lower it, so the model does not compile; the op is named
    blocked = check(fixed_db, "--script", f"{MODELS}:classifier", "--compile", expect=2)
    assert "torch.compile: does not compile (lowering, aten::lgamma)" in blocked.stdout
    assert "graph break" not in blocked.stdout


@pytest.mark.parametrize("args, message", [
    (["--script", "nowhere.py:f"], "--script: nowhere.py does not exist"),
    (["--script", f"{MODELS}:missing"], "has no function 'missing'"),
    (["--script", f"{MODELS}:not_a_pair"], "must return (model, inputs)"),
    (["--hf", "NoSuchForCausalLM"], "'NoSuchForCausalLM' is not a causal-LM architecture or model_type"),
    (["--exported", "nowhere.pt2"], "--exported: nowhere.pt2 does not exist"),
])
def test_bad_input_is_one_line_and_exit_3(fixed_db, args, message):
    result = check(fixed_db, *args, expect=3)
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_export_torch_cannot_read_and_an_empty_db(fixed_db, tmp_path):
    bad = tmp_path / "other-torch.pt2"
    bad.write_bytes(b"not an archive of this torch")
    result = check(fixed_db, "--exported", str(bad), expect=3)
    assert f"--exported: {bad} cannot be loaded by torch" in result.stderr
    empty = import_runs(tmp_path / "empty.db")  # a results DB without a run
    result = check(empty, "--script", f"{MODELS}:classifier", expect=3)
    assert "has no run of the ops suite" in result.stderr


def test_composite_ops_are_judged_by_what_reaches_the_device(fixed_db):
    # aten::convolution is a composite: on the device it reaches convolution_overrideable, which the
    # planted backend does not implement (as a backend without convolution kernels). Without --probe
    # the verdict must already say blocked, and agree with the one --probe gives after running the model.
    cnn = str(HERE.parents[1] / "docs" / "examples" / "tiny_cnn.py") + ":model"
    planted = ("--backend-module", "planted_backend")
    predicted = check(fixed_db, "--script", cnn, *planted, "--json", expect=2)
    data = json.loads(predicted.stdout)
    conv = next(o for o in data["ops"] if o["op"] == "aten::convolution")
    assert conv["verdict"] == "failing" and conv["evidence"]["failing_op"] == "aten::convolution_overrideable"
    probed = json.loads(check(fixed_db, "--script", cnn, *planted, "--probe", "--json", expect=2).stdout)
    assert probed["verdict"].startswith(data["verdict"]) and probed["probe"]["outcome"] == "error"
    # the bundled backend runs convolution natively: its replay reaches convolution_overrideable,
    # which the fixed DB never tested, so the convolution is untested there, not failing
    bundled = json.loads(check(fixed_db, "--script", cnn, "--json", expect=1).stdout)
    conv = next(o for o in bundled["ops"] if o["op"] == "aten::convolution")
    assert conv["verdict"] != "failing"
