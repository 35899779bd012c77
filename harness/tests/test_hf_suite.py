"""The hf suite: the shrinker on a sample of configs, its bad inputs, and architectures end to end."""

from __future__ import annotations

import json

import pytest
import torch

from conform_cli import REPO, cli, evidences, outcomes, suite_module

import transformers  # noqa: E402

suite_module("hf")  # the worker's modules importable, as the worker has them
import suitelib.tiny_models as shrink  # noqa: E402

tables = suite_module("hf", "tables")


@pytest.mark.parametrize("arch", ["LlamaForCausalLM", "GPT2LMHeadModel", "MixtralForCausalLM", "BloomForCausalLM",
                                  "Gemma3ForCausalLM", "Qwen3NextForCausalLM", "DeepseekV3ForCausalLM"])
def test_the_shrinker_makes_tiny_models(arch):
    config = shrink.tiny_config(arch)
    assert config.vocab_size == 99
    assert getattr(config, "hidden_size", 32) == 32 and getattr(config, "num_hidden_layers", 2) == 2
    with torch.device("meta"):
        parameters = sum(p.numel() for p in getattr(transformers, arch)(config).parameters())
    assert parameters < 1_000_000, f"{arch}: {parameters:,} parameters"


def test_a_hybrid_model_keeps_each_kind_of_layer():
    config = shrink.tiny_config("Qwen3NextForCausalLM")
    assert config.num_hidden_layers == 2 and set(config.layer_types) == {"linear_attention", "full_attention"}


def test_unknown_architecture_and_bad_overrides_are_named(tmp_path, monkeypatch):
    with pytest.raises(KeyError, match="'NoSuchForCausalLM' is not a causal-LM architecture"):
        shrink.tiny_config("NoSuchForCausalLM")
    bad = tmp_path / "overrides.json"
    monkeypatch.setattr(shrink, "OVERRIDES_FILE", bad)
    bad.write_text(json.dumps({"description": "d", "overrides": {"NoSuchForCausalLM": {"hidden_size": 8}}}))
    shrink.overrides.cache_clear()
    with pytest.raises(ValueError, match="'NoSuchForCausalLM' is not a causal-LM architecture or model_type"):
        shrink.overrides()
    bad.write_text(json.dumps({"description": "d", "overrides": {"llama": {"hidden_sise": 8}}}))
    shrink.overrides.cache_clear()
    with pytest.raises(ValueError, match=r"override for 'llama' names field\(s\) \['hidden_sise'\]"):
        shrink.overrides()
    shrink.overrides.cache_clear()


def test_overrides_reach_into_sub_configs_and_seed_configs_that_fail_their_own_defaults():
    # a sub-config override updates the shrunk sub-config, it does not bring back full sizes
    attn = shrink.tiny_config("DbrxForCausalLM").attn_config
    assert (attn.kv_n_heads, attn.clip_qkv, attn.rope_theta) == (1, 8, 10000.0)
    # Gemma4AssistantConfig() fails its own validator: the override's fields seed it
    with pytest.raises(Exception):
        shrink.config_class("Gemma4AssistantForCausalLM")()
    config = shrink.tiny_config("Gemma4AssistantForCausalLM")
    assert config.text_config.hidden_size == 32 and config.text_config.num_hidden_layers == 2


def test_label_layouts_are_checked_and_reshape_ids_as_the_model_reads_labels(tmp_path, monkeypatch):
    suite = suite_module("hf")
    bad = tmp_path / "overrides.json"
    monkeypatch.setattr(shrink, "OVERRIDES_FILE", bad)
    bad.write_text(json.dumps({"description": "d", "overrides": {}, "labels": {"MusicgenForCausalLM": "codebooks_first"}}))
    shrink.label_layouts.cache_clear()
    with pytest.raises(ValueError, match="labels entry 'MusicgenForCausalLM': 'codebooks_first'"):
        shrink.label_layouts()
    monkeypatch.setattr(shrink, "OVERRIDES_FILE", REPO / "harness" / "worker" / "suitelib" / "tiny_models.json")
    shrink.label_layouts.cache_clear()
    model = transformers.MusicgenForCausalLM(shrink.tiny_config("MusicgenForCausalLM"))
    model.config.num_codebooks = 2  # the layout, at more than the one codebook the suite uses
    ids = torch.arange(2 * 2 * 5).reshape(4, 5)  # (batch 2 * codebooks 2, seq 5)
    labels = suite.labels_for(model, ids)
    assert labels.shape == (2, 5, 2) and labels[1, :, 0].tolist() == ids[2].tolist()
    assert suite.labels_for(transformers.LlamaForCausalLM(shrink.tiny_config("LlamaForCausalLM")), ids) is ids


def test_the_shipped_override_and_most_used_files_are_valid():
    shrink.overrides.cache_clear()
    assert shrink.overrides()
    assert "LlamaForCausalLM" in tables.most_used()


def test_architectures_end_to_end_through_the_cli(db):
    result = cli("run", "--suite", "hf", "--ops", "^(LlamaForCausalLM|GPT2LMHeadModel)$", "--dtypes", "float32",
                 "--db", str(db), "--timeout", "120")
    got = outcomes(db)
    assert got["hf/LlamaForCausalLM/float32/forward"] == "pass"
    assert got["hf/LlamaForCausalLM/float32/backward"] == "pass"
    assert got["hf/LlamaForCausalLM/float32/static_shapes"] == "pass"
    assert got["hf/LlamaForCausalLM/float32/generate"] in ("pass", "fallback")
    evidence = evidences(db)
    # torch.compile of the whole model: one graph, no break, logits as the CPU's
    assert got["hf/LlamaForCausalLM/float32/compiled_forward"] == "pass"
    compiled = evidence["hf/LlamaForCausalLM/float32/compiled_forward"]
    assert compiled["graphs"] == 1 and compiled["graph_breaks"] == [] and compiled["compile_seconds"] > 0
    assert compiled["backend_compile_stats"]["graphs_compiled"] == 1
    shapes = evidence["hf/LlamaForCausalLM/float32/static_shapes"]
    assert shapes["compiles_same_shapes"] == 0 and shapes["compiles_new_sequence_length"] > 0
    assert evidence["hf/LlamaForCausalLM/float32/forward"]["peak_device_memory"] > 0
    # GPT-2 ties its embedding to its output layer: a plain Module.to would untie them on a
    # PrivateUse1 device; the suite's move keeps the tie, so the summed gradient matches the CPU
    gpt2 = evidence["hf/GPT2LMHeadModel/float32/backward"]
    assert gpt2["weight_ties_plain_to_would_break"] == ["transformer.wte.weight = lm_head.weight"]
    assert "weight_ties_broken_by_move" not in gpt2
    assert got["hf/GPT2LMHeadModel/float32/backward"] == "pass"
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    headline = coverage["headline"]  # the hf suite's own noun and headline subset, as it declared them
    assert headline["subjects"] == 2 and headline["headlines"][0]["subjects"] == 2
    assert headline["subject_text"].endswith("of 2 causal-LM architectures pass forward, generate and backward natively")
    assert {a["name"] for a in coverage["subjects"]} == {"LlamaForCausalLM", "GPT2LMHeadModel"}
    summary = (db.parent / "latest" / "summary.md").read_text()
    assert "### Causal-LM architectures" in summary and "most-used causal-LM architectures" in summary
    assert "report:" in result.stdout


def test_an_hf_coverage_json_follows_the_schema_too(db):
    import jsonschema

    cli("run", "--suite", "hf", "--ops", "^OPTForCausalLM$", "--dtypes", "float32", "--checks", "forward",
        "--db", str(db), "--timeout", "120")
    schema = json.loads((REPO / "reports" / "coverage.schema.json").read_text())
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    jsonschema.validate(coverage, schema)
    assert coverage["subjects"][0]["name"] == "OPTForCausalLM"


def test_a_case_transformers_cannot_run_is_skipped_by_the_suite_s_own_list(db):
    """The suite's not_runnable.json applies before any backend's list, and without them: no
    backend has to carry what no device can run."""
    cli("run", "--suite", "hf", "--ops", "^GitForCausalLM$", "--dtypes", "float32", "--checks", "backward",
        "--db", str(db), "--strict", "--no-skiplists")
    assert outcomes(db) == {"hf/GitForCausalLM/float32/backward": "skip"}
    entry = evidences(db)["hf/GitForCausalLM/float32/backward"]["skiplist"]
    assert entry["category"] == "not_runnable" and entry["mode"] == "skip"
    assert entry["entry"].startswith(str(REPO / "suites" / "hf" / "not_runnable.json") + ":")
    assert "Git's loss expects image tokens" in entry["reason"]


def test_an_architecture_needing_a_missing_package_is_a_skip_not_an_error(monkeypatch):
    suite = suite_module("hf")

    def needs_timm(*args):
        raise ImportError("TimmWrapperModel requires the PIL library but it was not found in your environment.")

    monkeypatch.setattr(suite, "build", needs_timm)
    ctx = type("Ctx", (), {"device": "cpu", "seed": 0, "compile_cache": staticmethod(lambda: {})})()
    outcome, evidence = suite.SUITE.run_case("hf/LlamaForCausalLM/float32/forward", ctx)
    assert outcome == "skip" and evidence["suite_skip"] is True
    assert evidence["message"].startswith("needs a package this environment lacks: TimmWrapperModel requires")


def test_modules_an_architecture_keeps_in_float32_stay_there_at_bfloat16():
    model, _ = shrink.build("Inkling2ForCausalLM", torch.bfloat16, 0)
    dtypes = dict((n, p.dtype) for n, p in model.named_parameters())
    assert dtypes["model.layers.0.mlp.gate.weight"] == torch.float32  # the router, as from_pretrained keeps it
    assert dtypes["model.embed_tokens.weight"] == torch.bfloat16
    with torch.no_grad():  # with the router at bfloat16 the model does not run at all
        assert model(**shrink.inputs(0)).logits.shape == (2, 7, 99)


TRAIN = ["--suite", "hf", "--ops", "^LlamaForCausalLM$", "--checks", "train_step", "--reruns", "0", "-j", "2"]


def test_a_training_step_matches_and_the_scalers_inf_path_is_taken(db):
    cli("run", *TRAIN, "--db", str(db), "--timeout", "120")
    got, evidence = outcomes(db), evidences(db)
    # the model at float32 with autocast to the backend's bfloat16; at float16 with a GradScaler, whose
    # unscale and scale update the bundled backend runs through the CPU fallback
    assert got == {"hf/LlamaForCausalLM/float32/train_step": "pass", "hf/LlamaForCausalLM/float16/train_step": "fallback"}
    bf16 = evidence["hf/LlamaForCausalLM/float32/train_step"]
    assert bf16["autocast"] == "bfloat16" and bf16["optimizers_checked"] == ["foreach"]
    assert "no kernel of its own for aten::_fused_adamw_" in bf16["fused"]
    assert 0 < bf16["gradient_error_device"] < 4 * max(bf16["gradient_error_cpu"], 2**-9)
    fp16 = evidence["hf/LlamaForCausalLM/float16/train_step"]
    # overflow everywhere (skipped), a step, one inf gradient (skipped): the scale backs off twice
    assert [s["skipped"] for s in fp16["steps"]["foreach"]] == [True, False, True]
    assert [s["scale"] for s in fp16["steps"]["foreach"]] == [2.0**14, 2.0**14, 2.0**-2]
    assert fp16["inf_path_exercised"] is True


def test_a_scaler_that_misses_an_inf_is_caught(db):
    cli("run", *TRAIN, "--dtypes", "float16", "--backend-module", "defects_backend", "--no-skiplists", "--db",
        str(db), "--timeout", "120", env={"DEFECTS_CLASSES": "misses_inf"})
    assert outcomes(db) == {"hf/LlamaForCausalLM/float16/train_step": "fail"}
    message = evidences(db)["hf/LlamaForCausalLM/float16/train_step"]["message"]
    assert message.startswith("foreach step 3: the device's scaler took the step, its gradients hold inf or NaN")


def test_train_step_alone_has_float16_cases():
    listed = [case for case in suite_module("hf").list_cases() if case[0] == "LlamaForCausalLM"]
    assert {(dtype, check) for _, dtype, check in listed if dtype == "float16"} == {("float16", "train_step")}
    assert ("bfloat16", "train_step") not in {(dtype, check) for _, dtype, check in listed}
    assert ("float32", "train_step") in {(dtype, check) for _, dtype, check in listed}
