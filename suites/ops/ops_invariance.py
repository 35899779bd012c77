"""The `invariance` check: relations PyTorch defines an op to satisfy under a transform of its
inputs, over values far from make_tensor's default range. For the OpInfos of RELATIONS (reviewed:
which op has which relation, on which arguments), at float32, the first samples:

  shift        f(x + C) = f(x), C = 1024: softmax and log_softmax, and the normalizations (over
               the dimensions they normalize). A kernel exact for inputs centred on zero and wrong
               with a large common offset (a variance as E[x^2] - E[x]^2, an exp without the max
               subtracted) fails here, where samples in [-9, 9] pass.
  scale        f(S x) = S^k f(x), S = 1024: positively homogeneous ops of degree k (relu and the
               max family k = 1, normalize and rms_norm k = 0)
  batch        f(x[p]) = f(x)[p], p a permutation of dimension 0: ops computing each batch
               element apart (linear, convolution, bmm, layer_norm)

The transformed arguments are first rounded to multiples of 2^-10 within [-8, 8], so x + C and
S x are exact in float32 and the relation holds exactly in real arithmetic; the device's result
on the transformed input is compared with its own result transformed (RELATION_TOLERANCE: an
accumulation over values near C loses bits a correct kernel loses too). The CPU decides where a
relation holds: a sample whose CPU results do not satisfy it (an eps that matters at that
scale) is not judged, and `relations_not_holding_on_cpu` counts it. Evidence: `relations`, the
relations run with how many samples each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

import suite_api
from comparison import Mismatch, compare
from dispatch_capture import uncounted

from suitelib import opinfo
from suitelib.opinfo import judge, sample_variants, samples

SAMPLES_PER_CASE = 3
SHIFT, SCALE = 1024.0, 1024.0
GRID = 2.0 ** -10
RELATION_TOLERANCE = (1e-3, 1e-3)  # (rtol, atol) on results of magnitude about 1


@dataclass(frozen=True)
class Relation:
    kind: str  # shift, scale, batch
    arguments: tuple[int, ...] = (0,)  # positions among the sample's tensors that the transform applies to
    degree: int = 0  # scale: the output scales by S**degree


_SHIFT, _BATCH = Relation("shift"), Relation("batch")
RELATIONS: dict[str, tuple[Relation, ...]] = {
    "softmax": (_SHIFT,),
    "softmax.with_dtype": (_SHIFT,),
    "log_softmax": (_SHIFT,),
    "log_softmax.with_dtype": (_SHIFT,),
    "nn.functional.layer_norm": (_SHIFT, _BATCH),
    "nn.functional.group_norm": (_SHIFT,),
    "nn.functional.instance_norm": (_SHIFT,),
    "nn.functional.relu": (Relation("scale", degree=1),),
    "amax": (Relation("scale", degree=1),),
    "amin": (Relation("scale", degree=1),),
    "nn.functional.normalize": (Relation("scale", degree=0),),
    "nn.functional.rms_norm": (Relation("scale", degree=0),),
    "nn.functional.linear": (_BATCH,),
    "nn.functional.conv2d": (_BATCH,),
    "bmm": (Relation("batch", arguments=(0, 1)),),
}

DESCRIPTION = ("relations the op satisfies (reviewed): a large common offset (softmax, the normalizations), "
               "positive scaling, a permuted batch, each on the device's own results")


def applies(op, dtype: torch.dtype) -> bool:
    return dtype == torch.float32 and opinfo.subject(op) in RELATIONS


def _on_grid(t: torch.Tensor) -> torch.Tensor:
    return (t.detach() / GRID).round().clamp(-8 / GRID, 8 / GRID) * GRID


def _transformed(sample, relation: Relation, perm: torch.Tensor | None):
    """(sample with the relation's arguments on the grid, the same transformed), or None when an
    argument is missing or not floating."""
    leaves, spec = pytree.tree_flatten([sample.input, sample.args, sample.kwargs])
    positions = [i for i, t in enumerate(leaves) if isinstance(t, torch.Tensor)]
    if any(p >= len(positions) for p in relation.arguments):
        return None
    base, moved = list(leaves), list(leaves)
    for p in relation.arguments:
        t = leaves[positions[p]]
        if not t.is_floating_point() or (relation.kind == "batch" and (t.dim() == 0 or t.shape[0] < 2)):
            return None
        grid = _on_grid(t) if relation.kind != "batch" else t.detach()
        base[positions[p]] = grid
        moved[positions[p]] = (grid + SHIFT if relation.kind == "shift" else grid * SCALE if relation.kind == "scale"
                               else grid[perm])
    rebuild = lambda ls: sample_variants.rebuilt(sample, *_split(pytree.tree_unflatten(ls, spec)))  # noqa: E731
    return rebuild(base), rebuild(moved)


def _split(parts: list) -> tuple[Any, tuple, dict]:
    input, args, kwargs = parts
    return input, tuple(args), kwargs


@uncounted()  # the harness's arithmetic on the device's result: no op of the case's
def _expected(result: Any, relation: Relation, perm: torch.Tensor | None) -> Any:
    """The result transformed as the relation says the op's result transforms."""
    def one(t):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            return t
        if relation.kind == "scale":
            return t * SCALE ** relation.degree
        if relation.kind == "batch":
            return t[perm.to(t.device)] if t.dim() and t.shape[0] == len(perm) else t
        return t
    return pytree.tree_map(one, result)


@suite_api.check("invariance", DESCRIPTION, applies=applies)
def run(case: judge.Case) -> None:
    op = case.op
    call = lambda s: op(s.input, *s.args, **s.kwargs)  # noqa: E731
    ran: dict[str, int] = {}
    not_holding = 0
    for index, sample in enumerate(samples.generated(op, case.dtype, reference=False)):
        if case.compared >= SAMPLES_PER_CASE:
            break
        judged = False
        for relation in RELATIONS[opinfo.subject(op)]:
            first = next((t for t in samples.tensors(sample)), None)
            perm = torch.randperm(first.shape[0], generator=torch.Generator().manual_seed(index)) \
                if relation.kind == "batch" and first is not None and first.dim() else None
            pair = _transformed(sample, relation, perm)
            if pair is None:
                continue
            base, moved = pair
            try:  # the CPU decides whether the relation holds for these values
                compare(case.cpu(call, moved), _expected(case.cpu(call, base), relation, perm), *RELATION_TOLERANCE)
            except Mismatch:
                not_holding += 1
                continue
            except Exception:  # NoReference: the CPU cannot run it
                case.without_reference += 1
                continue
            where = {"variant": relation.kind, "sample_index": index, "sample": moved, "property": "invariance"}
            on_device = lambda s: call(samples.on_device(s, case.ctx.device, op))  # noqa: E731
            own = _expected(case.device(on_device, base, where=where), relation, perm)
            transformed = case.device(on_device, moved, where=where)
            try:
                compare(transformed, own, *RELATION_TOLERANCE)
            except Mismatch as mismatch:
                raise case.fail(f"f({_describe(relation)}) differs from the device's own f(x) transformed "
                                f"({_result(relation)}): {str(mismatch)[:1500]}",
                                {**where, "max_abs_error": mismatch.max_abs, "max_rel_error": mismatch.max_rel}) from None
            ran[relation.kind] = ran.get(relation.kind, 0) + 1
            case.variants_compared += 1
            judged = True
        case.compared += judged
    case.evidence["relations"] = ran
    if not_holding:
        case.evidence["relations_not_holding_on_cpu"] = not_holding
    if not ran:
        case.vacuous = "no sample to which a relation applies"


def _describe(relation: Relation) -> str:
    return {"shift": f"x + {SHIFT:g}", "scale": f"{SCALE:g} x", "batch": "x permuted along dimension 0"}[relation.kind]


def _result(relation: Relation) -> str:
    return {"shift": "the same", "scale": f"times {SCALE:g}^{relation.degree}",
            "batch": "permuted alike"}[relation.kind]
