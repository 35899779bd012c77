"""The `inplace` check (OpInfos that have an in-place variant): it returns self, keeps self's
storage, computes the CPU's values, leaves the other inputs untouched, and writes through views
of a larger tensor without touching the rest of it, and refuses a self whose elements share memory
as the CPU refuses it.

The views (EMBEDDINGS): self inside a larger storage whose every other element is a finite
sentinel (never NaN: a kernel that writes NaN over the whole span must not compare equal), at a
storage offset with sentinels before it and after its end, as an interleaved view, transposed, and
expanded (a stride of 0: its elements share memory, which the CPU refuses to write in place; the
device must refuse it too, with an error of the same type; where the CPU takes it, the last write
wins in an order PyTorch does not define, and nothing is compared: evidence `views_not_compared`).
The whole storage is compared: what the op wrote through the view, and every sentinel untouched.
"""

from __future__ import annotations

from typing import Any

import torch

import suite_api
from dispatch_capture import uncounted
from sides import NoReference, Verdict

from suitelib.opinfo import judge, sample_variants, samples

DESCRIPTION = ("the in-place variant: returns self, writes self and through a view, leaves other inputs "
               "untouched")


def applies(op, dtype: torch.dtype) -> bool:
    return op.inplace_variant is not None


SENTINEL = 7.25  # finite, exact in every floating dtype; 7 for integers, True for bool
PAD = 3  # sentinels before a view and after its end
EMBEDDINGS = ("interleaved", "transposed", "expanded")


def _sentinel(dtype: torch.dtype):
    return SENTINEL if dtype.is_floating_point or dtype.is_complex else (True if dtype == torch.bool else 7)


@uncounted()  # the harness's CPU input
def embedded(t: torch.Tensor, kind: str) -> torch.Tensor | None:
    """`t`'s values as a view into a larger storage of sentinels (a leaf, on the CPU), PAD
    sentinels before it and after its end: "interleaved", every other element of each row a
    sentinel; "transposed", its last two dimensions swapped in memory; "expanded", its first
    dimension longer than 1 read from one row (stride 0: other values, elements sharing memory).
    None where the kind changes nothing (fewer than two dimensions to transpose, none to expand)."""
    t = t.detach()
    shape = list(t.shape)
    if kind == "transposed" and t.dim() < 2 or kind == "expanded" and not any(n > 1 for n in shape) \
            or t.layout != torch.strided:
        return None
    if kind == "interleaved":
        strides, values = [], t
        step = 2
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    elif kind == "transposed":
        order = list(range(t.dim() - 2)) + [t.dim() - 1, t.dim() - 2]
        strides = [0] * t.dim()
        step = 1
        for d in reversed(order):
            strides[d] = step
            step *= max(shape[d], 1)
        values = t
    else:
        d = next(i for i, n in enumerate(shape) if n > 1)
        strides = list(torch.empty(shape, device="meta").stride())
        strides[d] = 0
        values = t.select(d, 0).unsqueeze(d).expand(shape)
    span = 1 + sum((n - 1) * st for n, st in zip(shape, strides) if n > 0) if all(shape) else 0
    base = torch.full((PAD + span + PAD,), _sentinel(t.dtype), dtype=t.dtype)
    view = base.as_strided(shape, strides, PAD)
    if kind != "expanded":
        view.copy_(values)
    else:
        view.select(d, 0).copy_(values.select(d, 0))
    return view.requires_grad_(t.requires_grad) if t.requires_grad else view


@uncounted()  # the harness's view of what the op wrote: no op of the case's
def _storage_of(t: torch.Tensor) -> torch.Tensor:
    """The whole storage under `t`, as a 1-d tensor of its dtype."""
    storage = t.untyped_storage()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, 0, (storage.nbytes() // t.element_size(),))


def _check_inplace(case: judge.Case, inputs: list) -> None:
    op, device = case.op, case.ctx.device

    def call(sample):  # on the CPU's own copy of the sample (Sides.cpu): its storage, and what the op left
        storage = sample.input.untyped_storage().data_ptr()
        returned = op.inplace_variant(sample.input, *sample.args, **sample.kwargs)
        return returned, sample, storage

    for index, sample in enumerate(inputs):
        if not isinstance(sample.input, torch.Tensor):
            case.without_reference += 1
            continue
        dev_sample = samples.on_device(sample, device, case.op)
        try:
            returned, cpu_sample, cpu_storage = case.cpu(call, sample)
        except NoReference:
            case.without_reference += 1
            continue
        returns_self = returned is cpu_sample.input
        keeps_storage = cpu_storage == cpu_sample.input.untyped_storage().data_ptr()

        def where(name: str, prop: str) -> dict[str, Any]:
            return {"variant": name, "property": prop, "sample_index": index, "sample": sample}

        target, storage = dev_sample.input, dev_sample.input.untyped_storage().data_ptr()
        with uncounted():  # self before the op, copied back by the harness
            original = target.detach().cpu().clone()
        returned = case.device(lambda s: op.inplace_variant(s.input, *s.args, **s.kwargs), dev_sample,
                               where=where("inplace", "runs"))
        if returns_self and returned is not target:
            raise case.fail("the in-place op returned a new tensor, not self", where("inplace", "returns self"))
        if keeps_storage and target.untyped_storage().data_ptr() != storage:
            raise case.fail("the in-place op moved self to new storage instead of writing into it (the CPU "
                            "writes into self's storage)", where("inplace", "storage kept"))
        try:
            case.compare(target, cpu_sample.input, where("inplace", "values of self"),
                         again=case.again(lambda s: call(s)[1].input, sample))
        except Verdict as verdict:
            with uncounted():  # self after the op, copied back by the harness
                unchanged = torch.equal(target.detach().cpu(), original)
            if unchanged and not torch.equal(cpu_sample.input, sample.input):
                verdict.evidence.update(where("inplace", "writes into self"))
                verdict.evidence["message"] = ("self is unchanged: the in-place op computed its result elsewhere "
                                               "(a copy) instead of writing into self. " + verdict.evidence["message"])
            raise
        others = lambda s: [t for t in samples.tensors(s)[1:]]  # noqa: E731
        case.compare(others(dev_sample), others(cpu_sample), where("inplace", "other inputs untouched"))
        case.variants_compared += 1

        # through a view: the op on a strided view of a larger tensor writes the view's elements of
        # that tensor and no other
        for kind in EMBEDDINGS:
            if (self_view := embedded(sample.input, kind)) is not None:
                _through_view(case, call, index, kind, sample_variants.rebuilt(sample, input=self_view))
        case.compared += 1


def _through_view(case: judge.Case, call, index: int, kind: str, variant) -> None:
    """The in-place op on `variant`, whose self is a view into sentinels (embedded()): the whole
    storage after it compared with the CPU's, or, where the CPU refuses (elements sharing
    memory), the device must refuse alike (Case.alike)."""
    whole = lambda s: _storage_of(call(s)[1].input)  # noqa: E731
    # Where the CPU takes an expanded self, the last write wins, in an order PyTorch does not
    # define: only its refusal is judged (the device must refuse alike), not what it writes.
    if case.alike(whole, index, f"inplace_{kind}", variant, compare_accepted=kind != "expanded"):
        seen = case.evidence.setdefault("views_refused", [])  # by the CPU, and the device with it
    elif kind == "expanded":  # taken by the CPU: what either side wrote was not compared, and says so
        seen = case.evidence.setdefault("views_not_compared", [])
    else:
        return
    if kind not in seen:
        seen.append(kind)


@suite_api.check("inplace", DESCRIPTION, applies=applies)
def run(case: judge.Case) -> None:
    _check_inplace(case, samples.generated(case.op, case.dtype, reference=False))
