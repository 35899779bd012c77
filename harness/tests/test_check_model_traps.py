"""check-model against the traps the launch articles warn about (docs/check-model.md): placement
(tensors left on the CPU, ops on CPU tensors inside the model, device_map="auto"), shapes (an
executable per new shape, and the buckets that cost fewer), and history (--record, --history)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conform_cli import HERE, cli

MODELS = HERE / "data" / "check_models.py"


def check(db: Path, *args: str, expect: int) -> dict:
    result = cli("check-model", *args, "--db", str(db), "--json", check=False)
    assert result.returncode == expect, result.stdout[-2000:] + result.stderr
    return json.loads(result.stdout)


def test_placement_names_each_trap_by_module_path(fixed_db):
    static = check(fixed_db, "--script", f"{MODELS}:misplaced", expect=1)["placement"]
    assert [(f["kind"], f["where"]) for f in static["findings"]] == [("tensor attribute", "scale")]

    probed = check(fixed_db, "--script", f"{MODELS}:misplaced", "--probe", expect=1)
    placement = probed["placement"]
    assert placement["setup"] == {"by": "model.to('neuron')"} and placement["on_device"]
    found = {(f["kind"], f["where"], f.get("op")): f for f in placement["findings"]}
    assert ("tensor attribute", "scale", None) in found
    host = {f["op"]: f["fix"] for f in placement["findings"] if f["kind"] == "op on CPU tensors"}
    assert "without device=" in host["aten::zeros"]
    assert "torch.tensor" in host["aten::lift_fresh"]
    assert ".cpu()" in host["aten::_to_copy"]
    assert "placement: " in probed["verdict"]
    # A model with no trap: no finding, and its forward ran on the device.
    clean = check(fixed_db, "--script", f"{MODELS}:one_op", "--probe", expect=0)["placement"]
    assert clean["findings"] == [] and clean["device_ops"] > 0


def test_device_map_auto_leaves_the_model_on_the_cpu_and_blocks_it(fixed_db):
    result = check(fixed_db, "--hf", "llama", "--probe", "--device-map", "auto", expect=2)
    placement = result["placement"]
    assert placement["setup"]["device_map"] == {"(the whole model)": "cpu"}
    assert not placement["on_device"] and placement["device_ops"] == 0
    assert {f["kind"] for f in placement["findings"]} >= {"parameter not on the device", "input not on the device"}
    assert result["verdict"].startswith("blocked by placement: after device_map='auto' nothing of the model")


def test_each_new_shape_costs_executables_and_buckets_cost_fewer(fixed_db):
    shapes = check(fixed_db, "--script", f"{MODELS}:one_op", "--probe", "--shapes", "2x16,2x24,2x32,2x64,2x100,2x128",
                   expect=0)["shapes"]
    assert [r["executables"] for r in shapes["shapes"]] == [1] * 6  # one op: one executable per new shape
    assert shapes["total"]["executables"] == 6
    assert shapes["buckets"] == [[2, 32], [2, 128]] and shapes["bucketed"]["executables"] == 2
    assert {tuple(r["shape"]): tuple(r["bucket"]) for r in shapes["shapes"]}[(2, 100)] == (2, 128)
    assert "pad inputs to the buckets 2x32, 2x128" in shapes["suggestion"]
    # each new shape's executable at the backend's declared latency (3 s + 0.2 s per op): one op each
    assert shapes["declared_compile_latency"] == {"base_seconds": 3.0, "per_op_seconds": 0.2}
    assert [r["estimated_compile_seconds"] for r in shapes["shapes"]] == pytest.approx([3.2] * 6)
    assert shapes["bucketed"]["estimated_compile_seconds"] == pytest.approx(6.4)
    assert "~19 s compiling executables at the declared latency for 6 shapes, ~6 s padded to 2 bucket(s)" \
        in shapes["suggestion"]
    hf = check(fixed_db, "--hf", "llama", "--probe", "--seq-lens", "16,32", expect=1)["shapes"]
    assert [r["shape"] for r in hf["shapes"]] == [[2, 32], [2, 16]] and all(r["executables"] > 0 for r in hf["shapes"])


def test_batch_sizes_multiply_the_sequence_lengths_an_hf_model_is_run_at(fixed_db):
    hf = check(fixed_db, "--hf", "llama", "--probe", "--seq-lens", "16", "--batch-sizes", "1,3", expect=1)["shapes"]
    assert sorted(r["shape"] for r in hf["shapes"]) == [[1, 16], [3, 16]]


def test_the_model_is_captured_at_the_dtype_asked_for(fixed_db):
    mlp = check(fixed_db, "--script", f"{MODELS}:mlp", "--dtype", "float64", expect=1)
    assert mlp["model"]["dtype"] == "float64"
    floating = {o["dtype"] for o in mlp["ops"] if o["dtype"].startswith("float")}
    assert floating == {"float64"}, floating  # the fixture's run is at float32: nothing is proven
    assert {o["verdict"] for o in mlp["ops"] if o["dtype"] == "float64"} == {"untested"}


@pytest.mark.parametrize("args, message", [
    (("--script", f"{MODELS}:mlp", "--dtype", "float33"), "--dtype float33: not a torch dtype"),
    (("--hf", "llama", "--probe", "--batch-sizes", "0"), "--batch-sizes 0: expected positive integers"),
    (("--script", f"{MODELS}:one_op", "--probe", "--shapes", "2x16,2by32"), "'2by32' is not a shape"),
    (("--hf", "llama", "--probe", "--seq-lens", "16,x"), "--seq-lens 16,x: expected positive integers"),
    (("--script", f"{MODELS}:one_op", "--shapes", "2x16"), "add --probe"),
    (("--script", f"{MODELS}:unmovable", "--probe"), "the model cannot be moved to neuron: RuntimeError: planted"),
])
def test_bad_input_is_one_line_and_records_nothing(fixed_db, args, message):
    result = cli("check-model", *args, "--record", "--db", str(fixed_db), check=False)
    assert result.returncode == 3 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    history = json.loads(cli("check-model", "--history", "", "--json", "--db", str(fixed_db)).stdout)
    assert history["models"] == []


def test_record_twice_across_a_changed_skip_list_and_the_history_shows_it(tmp_path):
    db = tmp_path / "results.db"
    cli("run", "--ops", "^(add|nn.functional.relu)$", "--dtypes", "float32", "--checks", "forward", "--reruns", "0", "--db", str(db))
    cli("check-model", "--script", f"{MODELS}:one_op", "--record", "--db", str(db), check=False)
    lists = tmp_path / "lists.json"
    lists.write_text(json.dumps({"entries": [{"suite": "ops", "subject": "nn.functional.relu", "mode": "skip",
                                              "category": "unsupported_op", "reason": "planted"}]}))
    cli("run", "--ops", "^(add|nn.functional.relu)$", "--dtypes", "float32", "--checks", "forward", "--reruns", "0",
        "--skiplists", str(lists), "--db", str(db))
    cli("check-model", "--script", f"{MODELS}:one_op", "--record", "--db", str(db), check=False)
    (model,) = json.loads(cli("check-model", "--history", "one_op", "--json", "--db", str(db)).stdout)["models"]
    first, second = model["checks"]
    assert model["model"].startswith("script:") and first["changes"] == []
    assert "aten::relu float32: native -> untested" in second["changes"]  # its cases skipped: no evidence left
    assert "exit 0 -> 1" in second["changes"]
    assert any(c.startswith("evidence run ") for c in second["changes"])
    text = cli("check-model", "--history", "--db", str(db)).stdout
    assert "changed: aten::relu float32: native -> untested" in text
