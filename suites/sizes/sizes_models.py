"""Model-derived shapes: the ops of one transformer layer (and the embedding and LM head) of real
models (models.json) at their real sizes, for sequence lengths 1, 128 and 2048, each op called
alone on fresh random inputs of its shape, so that "Llama-3-8B's attention shapes run on the
device" is one case: sizes/Llama-3-8B.attention/bfloat16/seq2048.

Parts: `embedding` (the token lookup), `attention` (q, k, v and o projections, and
scaled_dot_product_attention with the model's heads and key/value heads: causal over the
sequence, and at seq1 one query attending a 2048-token cache), `mlp` (the gated or plain
feed-forward projections and the activation), `norm` (RMSNorm or LayerNorm over the hidden
size), `lm_head` (the vocabulary projection and log_softmax over it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from suitelib import reviewed

from .sizes_calls import Call, Rows

MODELS_FILE = Path(__file__).with_name("models.json")
SEQUENCES = {"seq1": 1, "seq128": 128, "seq2048": 2048}
PARTS = ("embedding", "attention", "mlp", "norm", "lm_head")
DECODE_CACHE = 2048  # keys a single query attends at seq1
VOCAB_FLOOR = 4097  # a vocabulary cut to fit the memory bound keeps the largest tile and one more


@dataclass(frozen=True)
class Dims:
    architecture: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    gated: bool  # gate and up projections (Llama-style) or one fc projection (GPT-2-style)
    activation: str
    rms_norm: bool
    eps: float


def _first(config: Any, *names: str) -> Any:
    return next((getattr(config, n) for n in names if getattr(config, n, None) is not None), None)


@reviewed.document
@cache
def models() -> dict[str, Dims]:
    """models.json's models, their configs built by transformers (derived fields follow)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    model_type = {arch: kind for kind, arch in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items()}

    def problem(_: str, spec: Any) -> str | None:
        if (wrong := reviewed.fields_problem(spec, {"architecture": str, "config": dict})) is not None:
            return wrong
        if spec["architecture"] not in model_type:
            return f"unknown architecture {spec['architecture']}"
        config_class = CONFIG_MAPPING[model_type[spec["architecture"]]]
        unknown = sorted(set(spec["config"]) - set(config_class().to_dict()))
        return f"{config_class.__name__} has no field {', '.join(unknown)}" if unknown else None

    out = {}
    specs = reviewed.read(MODELS_FILE, {"description": str, "models": reviewed.Field(dict, entries=problem)})["models"]
    for name, spec in specs.items():
        arch = spec["architecture"]
        config = CONFIG_MAPPING[model_type[arch]](**spec["config"])
        hidden = _first(config, "hidden_size", "n_embd")
        heads = _first(config, "num_attention_heads", "n_head")
        intermediate = _first(config, "intermediate_size", "n_inner")
        out[name] = Dims(
            architecture=arch, hidden=hidden, heads=heads,
            kv_heads=_first(config, "num_key_value_heads") or heads,
            head_dim=_first(config, "head_dim") or hidden // heads,
            intermediate=intermediate or 4 * hidden, vocab=config.vocab_size,
            gated=getattr(config, "intermediate_size", None) is not None,
            activation=_first(config, "hidden_activation", "hidden_act", "activation_function") or "gelu",
            rms_norm=getattr(config, "rms_norm_eps", None) is not None,
            eps=_first(config, "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon") or 1e-5)
    return out


def _activation(name: str):
    if name in ("silu", "swish"):
        return F.silu
    if "tanh" in name or name in ("gelu_new", "gelu_fast", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")
    return F.gelu


def _token_rows(tokens: int) -> Rows | None:
    """Beyond 128 tokens the reference checks a subset of them (sizes_calls.checked_rows)."""
    return Rows(arg=0, dim=0, out_dim=0) if tokens > 128 else None


def _linear(name: str, tokens: int, into: int, out: int, bias: bool = False, vocab: bool = False) -> Call:
    """F.linear of [tokens, into] by a weight [out, into]; `vocab`: `out` may be cut to fit memory."""
    shapes = [(tokens, into), (out, into)] + ([(out,)] if bias else [])
    call = Call(name, F.linear, shapes, k=into, rows=_token_rows(tokens))
    if vocab:
        call.shrink = ("vocab", out, VOCAB_FLOOR, lambda v: _linear(name, tokens, into, v, bias, vocab=True))
    return call


def _log_softmax(tokens: int, vocab: int) -> Call:
    call = Call("log_softmax", lambda x: F.log_softmax(x, dim=-1), [(tokens, vocab)], k=vocab,
                rows=_token_rows(tokens))
    call.shrink = ("vocab", vocab, VOCAB_FLOOR, lambda v: _log_softmax(tokens, v))
    return call


def _embedding(tokens: int, vocab: int, hidden: int) -> Call:
    call = Call("embedding", lambda ids, weight: F.embedding(ids, weight), [(tokens,), (vocab, hidden)], k=1,
                index={0: vocab}, rows=_token_rows(tokens))
    call.shrink = ("vocab", vocab, VOCAB_FLOOR, lambda v: _embedding(tokens, v, hidden))
    return call


def _attention(m: Dims, seq: int) -> Call:
    queries, keys = seq, (DECODE_CACHE if seq == 1 else seq)
    causal = seq > 1
    gqa = m.kv_heads != m.heads

    def sdpa(q, k, v, attn_mask=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal and attn_mask is None,
                                              enable_gqa=gqa)

    def causal_rows(args, rows):  # the reference on a subset of queries: their rows of the causal mask
        mask = torch.arange(keys)[None, :] <= rows[:, None]
        return (*args, mask)

    return Call("scaled_dot_product_attention", sdpa,
                [(1, m.heads, queries, m.head_dim), (1, m.kv_heads, keys, m.head_dim),
                 (1, m.kv_heads, keys, m.head_dim)], k=keys * m.head_dim,
                rows=Rows(arg=0, dim=2, out_dim=2, prepare=causal_rows if causal else None) if queries > 128 else None)


def calls(model: str, part: str, seq: int) -> list[Call]:
    """The calls of one part of a model's layer at a sequence length."""
    m = models()[model]
    h = m.hidden
    if part == "embedding":
        return [_embedding(seq, m.vocab, h)]
    if part == "attention":
        q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
        return [_linear("q_proj", seq, h, q), _linear("k_proj/v_proj", seq, h, kv), _attention(m, seq),
                _linear("o_proj", seq, q, h)]
    if part == "mlp":
        act = _activation(m.activation)
        first = "gate_proj/up_proj" if m.gated else "fc"
        return [_linear(first, seq, h, m.intermediate, bias=not m.gated),
                Call(f"activation {m.activation}", act, [(seq, m.intermediate)], k=1, rows=_token_rows(seq)),
                _linear("down_proj" if m.gated else "proj", seq, m.intermediate, h, bias=not m.gated)]
    if part == "norm":
        if m.rms_norm:
            return [Call("rms_norm", lambda x, w: F.rms_norm(x, (h,), w, eps=m.eps), [(seq, h), (h,)], k=h,
                         rows=_token_rows(seq))]
        return [Call("layer_norm", lambda x, w, b: F.layer_norm(x, (h,), w, b, eps=m.eps), [(seq, h), (h,), (h,)],
                     k=h, rows=_token_rows(seq))]
    if part == "lm_head":
        return [_linear("lm_head", seq, h, m.vocab, vocab=True), _log_softmax(seq, m.vocab)]
    raise KeyError(part)


def subjects() -> list[str]:
    return [f"{model}.{part}" for model in models() for part in PARTS]
