"""The `inplace` check (OpInfos that have an in-place variant): it returns self, keeps self's
storage, computes the CPU's values, leaves the other inputs untouched, and writes through a view
of a larger tensor without touching the rest of it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.testing._internal.common_utils import noncontiguous_like

import suite_api
from dispatch_capture import uncounted
from sides import NoReference, Verdict

from suitelib.opinfo import sample_variants
from suitelib.opinfo import runs

DESCRIPTION = ("the in-place variant: returns self, writes self and through a view, leaves other inputs "
               "untouched")


def applies(op, dtype: torch.dtype) -> bool:
    return op.inplace_variant is not None


def _storage_of(t: torch.Tensor) -> torch.Tensor:
    """The whole storage under `t`, as a 1-d tensor of its dtype."""
    storage = t.untyped_storage()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, 0, (storage.nbytes() // t.element_size(),))


def _check_inplace(case: runs.Case, samples: list) -> None:
    op, device = case.op, case.ctx.device

    def call(sample):  # on the CPU's own copy of the sample (Sides.cpu): its storage, and what the op left
        storage = sample.input.untyped_storage().data_ptr()
        returned = op.inplace_variant(sample.input, *sample.args, **sample.kwargs)
        return returned, sample, storage

    for index, sample in enumerate(samples):
        if not isinstance(sample.input, torch.Tensor):
            case.without_reference += 1
            continue
        with uncounted():  # an input the harness makes on the CPU: no op of the case's
            view_sample = sample_variants.rebuilt(sample, input=noncontiguous_like(sample.input.detach().clone()))
        dev_sample, dev_view_sample = runs.on_device(sample, device, case.op), runs.on_device(view_sample, device, case.op)
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
            if torch.equal(target.detach().cpu(), original) and not torch.equal(cpu_sample.input, sample.input):
                verdict.evidence.update(where("inplace", "writes into self"))
                verdict.evidence["message"] = ("self is unchanged: the in-place op computed its result elsewhere "
                                               "(a copy) instead of writing into self. " + verdict.evidence["message"])
            raise
        others = lambda s: [t for t in runs.tensors(s)[1:]]  # noqa: E731
        case.compare(others(dev_sample), others(cpu_sample), where("inplace", "other inputs untouched"))
        case.variants_compared += 1

        # through a view: the op on a strided view of a larger tensor writes the view's elements of
        # that tensor and no other
        try:
            _, cpu_view, _ = case.cpu(call, view_sample)
        except NoReference:
            case.variants_without_reference += 1
        else:
            w = where("inplace_view", "writes through a view")
            case.device(lambda s: op.inplace_variant(s.input, *s.args, **s.kwargs), dev_view_sample, where=w)
            case.compare(_storage_of(dev_view_sample.input), _storage_of(cpu_view.input), w,
                         again=case.again(lambda s: _storage_of(call(s)[1].input), view_sample))
            case.variants_compared += 1
        case.compared += 1


@suite_api.check("inplace", DESCRIPTION, applies=applies)
def run(case: runs.Case) -> None:
    _check_inplace(case, runs.samples(case.op, case.dtype, reference=False))
