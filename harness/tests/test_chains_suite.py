"""The chains suite: chains of ops run on the device in one go against the CPU, every value and
every mid-chain read compared; a defect of a fused path, which no one-op call shows, is caught and
shrunk to a short chain. defects_backend.py's opt-in class fuses_stale plants one: each planted
op's result stays in a buffer of the "executable", and a later op reading it there misses an
in-place write made to it between."""

from __future__ import annotations

import torch

from conform_cli import FOREIGN, cli, outcomes, results, suite_module

CHAINS = ["--suite", "chains", "--no-skiplists", "--reruns", "0", "-j", "2"]
FUSES_STALE = {"DEFECTS_CLASSES": "fuses_stale"}


def test_every_variant_matches_on_the_bundled_backend_which_fuses_the_chains(db):
    cli("run", *CHAINS, "--ops", "^elementwise$", "--db", str(db))
    found = results(db)
    assert set(outcomes(db).values()) == {"pass"}
    assert {case.split("/")[3] for case in found} == {"plain", "inplace", "readback", "view_written", "streams",
                                                      "model_shapes"}
    for case, result in found.items():
        chains = result["evidence"]["chains"]
        assert chains["examples_run"] >= 50, case
        assert chains["device_fusion"]["fused_chains"] > 0, case  # the device fused what the case ran
    # each variant drew its own step
    assert found["chains/elementwise/float32/inplace"]["evidence"]["chains"]["steps_drawn"]["inplace"] > 0
    assert found["chains/elementwise/float32/readback"]["evidence"]["chains"]["steps_drawn"]["readback"] > 0
    assert found["chains/elementwise/bfloat16/view_written"]["evidence"]["chains"]["steps_drawn"]["view_write"] > 0


def test_a_fused_path_that_misses_an_inplace_write_is_caught_by_chains_only(db, tmp_path):
    cli("run", *CHAINS, "--checks", "inplace", "--backend-module", "defects_backend", "--db", str(db),
        env=FUSES_STALE)
    for dtype in ("float32", "bfloat16"):
        case = f"chains/elementwise/{dtype}/inplace"
        assert outcomes(db)[case] == "fail", case
        e = results(db)[case]["evidence"]
        # shrunk: a short chain with the in-place write between two ops of the fused path
        assert any(".add_(" in step or ".mul_(" in step or ".copy_(" in step or "_(" in step for step in e["chain"])
        assert len(e["chain"]) <= 8
        assert e["message"].startswith("[")
    # The same ops one call at a time (forward, inplace, out, backward): the ops suite sees nothing.
    ops = tmp_path / "ops.db"
    cli("run", "--ops", "^(abs|add|cos|mul|maximum|tanh|neg|relu)$", "--dtypes", "float32",
        "--checks", "forward,inplace,out,backward", "--backend-module", "defects_backend", "--no-skiplists",
        "--reruns", "0", "-j", "2", "--db", str(ops), env=FUSES_STALE)
    assert not {case: o for case, o in outcomes(ops).items() if o in ("fail", "error")}


def test_a_chain_is_described_step_by_step():
    chains = suite_module("chains")
    program = [("unary", "tanh", 0), ("binary", "mul", 2, 1), ("inplace", "add_", 2, 0), ("readback", "host", 3),
               ("view_write", "t/neg_", 2), ("view", "first_col", 17)]
    assert chains.describe(program) == ["v2 = tanh(v0)", "v3 = mul(v2, v1)", "v2.add_(v0)", "read v3", "t(v2).neg_()",
                                        "v4 = first_col(v1)"]


def test_the_chains_run_on_a_backend_unlike_the_bundled_one(db):
    cli("run", *CHAINS, *FOREIGN, "--ops", "^(elementwise|hf.GPT2LMHeadModel)$", "--dtypes", "float32",
        "--db", str(db))
    got = outcomes(db)
    # the foreign backend runs all but add, mul and mm through the CPU fallback; it has no streams
    gpt2 = "chains/hf.GPT2LMHeadModel/float32/windows"
    assert set(got[case] for case in got if case != gpt2) <= {"fallback", "skip"}, got
    assert got["chains/elementwise/float32/streams"] == "skip"
    # its mm is 0.25 off everywhere: a window of the model's step meets it, narrowed to the one op
    assert got[gpt2] == "fail"
    window = results(db)[gpt2]["evidence"]["window"]
    assert len(window) == 1 and "aten.mm.default" in window[0]
    for result in results(db).values():
        if result["outcome"] != "skip":
            assert result["evidence"]["chains"]["device_fusion"] == "unavailable"


def test_windows_of_a_models_training_step_replay_on_the_device(db):
    cli("run", *CHAINS, "--checks", "windows", "--ops", "^hf.LlamaForCausalLM$", "--db", str(db))
    assert outcomes(db) == {"chains/hf.LlamaForCausalLM/float32/windows": "pass"}
    chains = results(db)["chains/hf.LlamaForCausalLM/float32/windows"]["evidence"]["chains"]
    assert chains["windows_run"] == 48 and 0 < chains["backward_windows"] < 48  # forward and backward
    assert chains["calls"] > chains["forward_calls"] > 0
    assert chains["values_compared"] > chains["windows_run"]
    assert chains["device_fusion"]["fused_chains"] > 0


def test_a_window_is_replayed_alone_from_what_it_read():
    traces = suite_module("chains", "traces")
    recording = traces.record("GPT2LMHeadModel", torch.float32, 0)
    starts = traces.windows(recording, 8, 5)
    assert len(starts) == 5 and starts[0] == 0 and starts[-1] >= recording.forward_calls  # spread to the backward
    calls = recording.calls[starts[2]:starts[2] + 8]
    first, second = traces.replay(calls, "cpu"), traces.replay(calls, "cpu")
    assert len(first) == len(second) > 0
    assert all(a is not b for a, b in zip(first, second))  # each replay from its own copies
