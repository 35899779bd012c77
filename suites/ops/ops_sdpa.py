"""The ops suite's `sdpa` check: nn.functional.scaled_dot_product_attention with what its OpInfo
samples leave out or barely touch (boolean and additive float masks, broadcast and full, causal
with more keys than queries, an explicit scale, grouped-query attention with enable_gqa=True,
each with dropout_p=0), against the math reference softmax(Q K^T * scale + mask) V computed on
the CPU in float64 (grouped keys and values repeated per query head; a causal mask the
lower-left-anchored triangle torch documents, ones(L, S).tril()).

A variant passes when the device's largest error against the reference is within the dtype's
tolerance (the OpInfo's) of the reference's magnitude, or at most twice the error the CPU's own
scaled_dot_product_attention makes at the dtype (low precision rounds Q K^T and the softmax:
the CPU sets the bar). Every variant runs; the evidence names the first failing one (`variant`)
and lists all (`failed_variants`) with each one's errors.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
import torch.nn.functional as F

from comparison import to_device
from dispatch_capture import uncounted
from evidence import exception_evidence
from sides import Verdict
from vocabulary import Outcome

import suite_api

DESCRIPTION = ("scaled_dot_product_attention with boolean and float masks (broadcast and full), is_causal, an "
               "explicit scale and grouped-query attention (enable_gqa), dropout_p=0, against the float64 math "
               "reference")

SUBJECT = "nn.functional.scaled_dot_product_attention"
B, H, L, S, E, EV = 2, 4, 5, 7, 8, 6  # batch, query heads, queries, keys, head dim, value dim
KV_HEADS = 2  # grouped-query attention: two query heads per key/value head


def applies(op, dtype: torch.dtype) -> bool:
    return op.name == SUBJECT and not op.variant_test_name and dtype.is_floating_point


def _inputs(dtype: torch.dtype, generator: torch.Generator, *, kv_heads: int = H, seq: int = S):
    def make(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype)
    return make(B, H, L, E), make(B, kv_heads, seq, E), make(B, kv_heads, seq, EV)


def _bool_mask(generator: torch.Generator, *shape) -> torch.Tensor:
    """Random keep/drop, with the first key kept in every row (a row with no key is NaN in the
    math and 0 in the fused kernels: not what this check is about)."""
    mask = torch.rand(*shape, generator=generator) < 0.6
    mask[..., 0] = True
    return mask


def _float_mask(generator: torch.Generator, dtype: torch.dtype, *shape) -> torch.Tensor:
    """An additive mask: random biases, -inf at some keys (never the first)."""
    bias = torch.randn(*shape, generator=generator, dtype=torch.float64)
    drop = torch.rand(*shape, generator=generator) < 0.3
    drop[..., 0] = False
    return bias.masked_fill(drop, -math.inf).to(dtype)


def variants(dtype: torch.dtype, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """(name, keyword arguments of F.scaled_dot_product_attention) for each variant."""
    g = torch.Generator().manual_seed(seed)

    def qkv(**kw):
        q, k, v = _inputs(dtype, g, **kw)
        return {"query": q, "key": k, "value": v}
    return [
        ("no_mask", qkv()),
        ("bool_mask_broadcast", {**qkv(), "attn_mask": _bool_mask(g, L, S)}),
        ("bool_mask_full", {**qkv(), "attn_mask": _bool_mask(g, B, H, L, S)}),
        ("float_mask", {**qkv(), "attn_mask": _float_mask(g, dtype, B, 1, L, S)}),
        ("causal", {**qkv(), "is_causal": True}),
        ("causal_square", {**qkv(seq=L), "is_causal": True}),
        ("scale", {**qkv(), "scale": 0.3}),
        ("gqa", {**qkv(kv_heads=KV_HEADS), "enable_gqa": True}),
        ("gqa_bool_mask", {**qkv(kv_heads=KV_HEADS), "enable_gqa": True, "attn_mask": _bool_mask(g, L, S)}),
        ("gqa_causal", {**qkv(kv_heads=KV_HEADS), "enable_gqa": True, "is_causal": True}),
    ]


def reference(query, key, value, attn_mask=None, is_causal=False, scale=None, enable_gqa=False) -> torch.Tensor:
    """softmax(Q K^T * scale + mask) V in float64 on the CPU."""
    q, k, v = (t.detach().cpu().to(torch.float64) for t in (query, key, value))
    if enable_gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), dim=-3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), dim=-3)
    scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.size(-1)) if scale is None else scale)
    if is_causal:
        scores = scores.masked_fill(~torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril(), -math.inf)
    if attn_mask is not None:
        mask = attn_mask.cpu()
        scores = scores.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else scores + mask.to(torch.float64)
    return torch.softmax(scores, dim=-1) @ v


@uncounted()  # the device's result copied back and measured by the harness
def _max_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return float((actual.detach().cpu().to(torch.float64) - expected).abs().max())


@suite_api.check("sdpa", DESCRIPTION, applies=applies, api=False)
def run(case) -> None:
    device = case.ctx.device
    results: dict[str, dict[str, float]] = {}
    failed: list[str] = []
    for name, kwargs in variants(case.dtype, int(case.ctx.seed)):
        expected = reference(**kwargs)
        call: Callable[..., torch.Tensor] = lambda kw: F.scaled_dot_product_attention(dropout_p=0.0, **kw)  # noqa: E731
        cpu_error = _max_error(case._seeded(call, (kwargs,)), expected)
        moved = to_device(kwargs, device)
        try:
            actual = case.waited_on_device(call, moved)
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**exception_evidence(exc), "variant": name}) from exc
        if actual.dtype != case.dtype or actual.shape != expected.shape:
            results[name] = {"device_error": math.inf, "cpu_error": cpu_error}
            failed.append(name)
            continue
        device_error = _max_error(actual, expected)
        bound = max(case.atol + case.rtol * float(expected.abs().max()), 2.0 * cpu_error)
        results[name] = {"device_error": device_error, "cpu_error": cpu_error, "bound": bound}
        if not device_error <= bound:
            failed.append(name)
        case.compared += 1
    case.evidence["variants"] = results
    if failed:
        first = failed[0]
        raise Verdict(Outcome.FAIL, {
            **case.evidence, "variant": first, "failed_variants": failed, "max_abs_error": results[first]["device_error"],
            "message": "; ".join(f"{n}: error {results[n]['device_error']:.3g} against the float64 math reference "
                                 f"(the CPU's {results[n]['cpu_error']:.3g}, bound {results[n].get('bound', 0):.3g})"
                                 for n in failed)[:2000]})
