"""Tiny models of transformers' causal-LM architectures, built from configs without downloading
anything: the hf suite's, the distributed suite's and check-model's.

The generic shrinker reads an architecture's default config, sets the usual size fields to the
sizes transformers' own tests use (hidden 32, 2 layers, 2 heads, vocab 99), cuts per-layer lists
to the new depth, and builds the config again from those values, so that fields derived in the
config's constructor (head_dim, layer_types, ...) follow. `tiny_models.json` holds the few fields
an architecture needs beyond that; an override that names an unknown architecture or a field the
config does not have is an error naming it.
"""

from __future__ import annotations

import copy
import itertools
from functools import cache
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import PretrainedConfig
from transformers.core_model_loading import build_glob_alternation
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from suitelib import reviewed

HERE = Path(__file__).resolve().parent
OVERRIDES_FILE = HERE / "tiny_models.json"

# Intermediate sizes are multiples of 16: grouped matmuls of mixture-of-experts layers need it.
HIDDEN, LAYERS, HEADS, KV_HEADS, INTERMEDIATE, VOCAB, HEAD_DIM = 32, 2, 2, 2, 64, 99, 16
EXPERTS, EXPERTS_PER_TOKEN = 4, 2

# Field names of the same size across architectures (transformers is not uniform about them).
SIZES: dict[str, int] = {
    **dict.fromkeys(["hidden_size", "n_embd", "d_model", "dim", "embed_dim", "model_dim", "n_embed",
                     "word_embed_proj_dim", "emb_dim", "hidden_size_global"], HIDDEN),
    **dict.fromkeys(["num_hidden_layers", "n_layer", "num_layers", "n_layers", "decoder_layers",
                     "num_decoder_layers"], LAYERS),
    **dict.fromkeys(["num_attention_heads", "n_head", "num_heads", "n_heads", "decoder_attention_heads"], HEADS),
    **dict.fromkeys(["num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num"], KV_HEADS),
    **dict.fromkeys(["intermediate_size", "n_inner", "ffn_dim", "decoder_ffn_dim", "ffn_hidden_size",
                     "moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size",
                     "dense_intermediate_size", "ff_intermediate_size"], INTERMEDIATE),
    **dict.fromkeys(["head_dim", "attention_head_dim", "kv_channels", "qk_nope_head_dim", "v_head_dim",
                     "qk_rope_head_dim", "kv_lora_rank", "q_lora_rank"], HEAD_DIM),
    **dict.fromkeys(["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"], EXPERTS),
    **dict.fromkeys(["num_experts_per_tok", "moe_topk", "top_k", "num_experts_per_token", "moe_k"],
                    EXPERTS_PER_TOKEN),
    **dict.fromkeys(["n_group", "topk_group"], 1),  # expert groups must divide the tiny expert count
    **dict.fromkeys(["rotary_dim", "rotary_emb_base_dim"], HEAD_DIM // 2),
    "vocab_size": VOCAB,
}
# Token ids must stay inside the tiny vocabulary.
TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id",
             "cls_token_id", "mask_token_id")
LAYER_COUNTS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "decoder_layers", "num_decoder_layers")


@cache
def causal_lm_architectures() -> dict[str, str]:
    """Architecture class name -> model_type, for every causal-LM class of the installed transformers."""
    out: dict[str, str] = {}
    for model_type, names in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items():
        for name in (names,) if isinstance(names, str) else names:
            out.setdefault(name, model_type)
    return dict(sorted(out.items()))


# How labels=input_ids is laid out for a model whose loss reads labels in another shape.
LABEL_LAYOUTS = ("codebooks_last",)  # MusicGen: ids (batch * codebooks, seq), labels (batch, seq, codebooks)


def _document() -> dict[str, Any]:
    """tiny_models.json, checked: every override's key an architecture (class or model_type), every
    field one its config has; every labels key an architecture class, every value a known layout."""
    archs = causal_lm_architectures()

    def override_problem(key: str, fields: Any) -> str | None:
        if key not in archs and key not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            return f"'{key}' is not a causal-LM architecture or model_type of transformers {transformers.__version__}"
        if not isinstance(fields, dict):
            return f"override for '{key}' must be an object of config fields"
        config = default_config(config_class(key) if key in archs else CONFIG_MAPPING[key], fields)
        unknown = [f for f in fields if f not in config.to_dict() and not hasattr(config, f)]
        if unknown:
            return f"override for '{key}' names field(s) {unknown} that {type(config).__name__} does not have"
        return None

    def label_problem(arch: str, layout: Any) -> str | None:
        if arch in archs and layout in LABEL_LAYOUTS:
            return None
        return (f"labels entry '{arch}': {layout!r} (expected an architecture class of transformers "
                f"{transformers.__version__} and one of {list(LABEL_LAYOUTS)})")

    return reviewed.read(OVERRIDES_FILE, {"description": str,
                                          "overrides": reviewed.Field(dict, entries=override_problem),
                                          "labels": reviewed.Field(dict, required=False, entries=label_problem)})


@reviewed.document
@cache
def overrides() -> dict[str, dict[str, Any]]:
    """tiny_models.json "overrides", the file checked (_document())."""
    return _document()["overrides"]


@reviewed.document
@cache
def label_layouts() -> dict[str, str]:
    """tiny_models.json "labels", the file checked (_document())."""
    return _document().get("labels", {})


def architecture_of(name: str) -> str:
    """An architecture class name, given it or a model_type (llama -> LlamaForCausalLM)."""
    if name in causal_lm_architectures():
        return name
    by_type = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(name)
    if by_type is None:
        raise KeyError(f"'{name}' is not a causal-LM architecture or model_type of transformers "
                       f"{transformers.__version__} (e.g. LlamaForCausalLM or llama)")
    return by_type if isinstance(by_type, str) else by_type[0]


def config_class(architecture: str) -> type[PretrainedConfig]:
    # The class's own config class: it differs from the model_type's for the text-only model of a
    # multimodal family.
    return getattr(transformers, architecture).config_class or CONFIG_MAPPING[causal_lm_architectures()[architecture]]


def default_config(cls: type[PretrainedConfig], seed: dict[str, Any]) -> PretrainedConfig:
    """The config class's defaults. A config meant to be built around another model's (an assistant
    draft model) may fail its own validator at its defaults: then its override's fields seed it."""
    try:
        return cls()
    except Exception:
        if not seed:
            raise
        return cls(**seed)


def _apply(fields: dict[str, Any], override: dict[str, Any]) -> None:
    """An override's fields over the shrunk ones; a sub-config's (a dict) update the shrunk
    sub-config field by field instead of replacing it with the class's full-size defaults."""
    for key, value in override.items():
        old = fields.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and "model_type" in old:
            fields[key] = {**old, **value}
        else:
            fields[key] = value


def _keep_every_kind(per_layer: list[Any]) -> list[Any]:
    """The first LAYERS entries of a per-layer list, with its last entries replaced by kinds the
    cut would lose: a hybrid model keeps one full-attention layer beside its linear ones."""
    kept = per_layer[:LAYERS]
    missing = [kind for kind in dict.fromkeys(per_layer) if kind not in kept and isinstance(kind, str)]
    for i, kind in enumerate(missing[:LAYERS]):
        kept[LAYERS - 1 - i] = kind
    return kept


def _shrunk_fields(defaults: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, size in SIZES.items():
        value = defaults.get(key, "absent")
        if isinstance(value, int) and not isinstance(value, bool):
            fields[key] = min(size, value) if size == EXPERTS_PER_TOKEN else size
        elif value is None:  # "derive it" in some configs, "required" in their models: give the size
            fields[key] = size
    old_layers = next((defaults[k] for k in LAYER_COUNTS if isinstance(defaults.get(k), int)), None)
    if old_layers:
        for key, value in defaults.items():  # per-layer lists follow the new depth
            if isinstance(value, list) and len(value) == old_layers and old_layers > LAYERS:
                fields[key] = _keep_every_kind(value)
    for key, value in defaults.items():  # every vocabulary, not only vocab_size
        if "vocab" in key and isinstance(value, int) and not isinstance(value, bool) and value > VOCAB:
            fields[key] = VOCAB
        elif isinstance(value, dict) and "model_type" in value:  # a sub-config: shrink it too
            fields[key] = {**value, **_shrunk_fields(value)}
        elif isinstance(value, dict) and value and all(str(k).isdigit() for k in value):
            fields[key] = {k: v for k, v in value.items() if int(k) < LAYERS}  # keyed by layer index
    for key in TOKEN_IDS:
        value = defaults.get(key)
        if isinstance(value, int) and value >= VOCAB:
            fields[key] = VOCAB - 1
        elif isinstance(value, list):
            fields[key] = [v if v < VOCAB else VOCAB - 1 for v in value if isinstance(v, int)]
    if isinstance(defaults.get("max_position_embeddings"), int):
        fields["max_position_embeddings"] = 512
    return fields


def tiny_config(architecture: str) -> PretrainedConfig:
    """The architecture's config at test size. Raises KeyError for an unknown architecture."""
    archs = causal_lm_architectures()
    if architecture not in archs:
        raise KeyError(f"'{architecture}' is not a causal-LM architecture of transformers "
                       f"{transformers.__version__}")
    cls = config_class(architecture)
    by_type, by_class = overrides().get(cls.model_type, {}), overrides().get(architecture, {})
    fields = {**_shrunk_fields(default_config(cls, {**by_type, **by_class}).to_dict()), "use_cache": True}
    _apply(fields, by_type)
    _apply(fields, by_class)
    return cls(**fields)


BATCH, SEQ, SEQ2 = 2, 7, 11  # the inputs' batch and sequence lengths
MAX_PARAMETERS = 20_000_000  # a tiny config has well under 1M; more means the shrinker missed a size


@cache
def _tiny(arch: str) -> tuple[transformers.PretrainedConfig, int]:
    """The architecture's tiny config and parameter count, once per worker (eight cases share it)."""
    config = tiny_config(arch)
    with torch.device("meta"):
        parameters = sum(p.numel() for p in getattr(transformers, arch)(config).parameters())
    if parameters > MAX_PARAMETERS:
        raise ValueError(f"the tiny config still has {parameters:,} parameters: a size field the shrinker "
                         f"does not know; add it to harness/worker/suitelib/tiny_models.json")
    return config, parameters


def _keep_in_float32(model: torch.nn.Module, dtype: torch.dtype) -> None:
    """What from_pretrained(dtype=...) keeps in float32 at a lower dtype goes back to float32 (a
    router's weight, a convolution the architecture always runs in float32), matched as it matches."""
    plan = model._get_dtype_plan(dtype)
    if plan:
        pattern = build_glob_alternation(list(plan))[0]
        for name, tensor in itertools.chain(model.named_parameters(), model.named_buffers()):
            if pattern.search(name):
                tensor.data = tensor.data.float()


def build(arch: str, dtype: torch.dtype, seed: int) -> tuple[torch.nn.Module, int]:
    config, parameters = _tiny(arch)
    torch.manual_seed(seed)
    model = getattr(transformers, arch)(copy.deepcopy(config)).eval().to(dtype)
    _keep_in_float32(model, dtype)
    generation = getattr(model, "generation_config", None)
    if generation is not None and generation.pad_token_id is None:
        generation.pad_token_id = 0
    if generation is not None and generation.decoder_start_token_id is None:
        # transformers falls back to bos only for encoder-decoders; a decoder whose own generate()
        # reads it (MusicGen's delay pattern) needs the same fallback
        generation.decoder_start_token_id = generation.bos_token_id
    return model, parameters


def inputs(seed: int, seq: int = SEQ, batch: int = BATCH) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 99, (batch, seq), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
