"""The `out` check (OpInfos with supports_out), as upstream's test_out does: an out= full of NaN (or
the largest integer), a non-contiguous out= (its strides and storage kept), a wrongly sized out=
(resized, with the CPU's warning), and an out= dtype the CPU rejects (int64 for floating results)
rejected on the device too. And argument identity: out= one of the inputs itself (add(x, y, out=x),
cat([a, b], out=a)), at one dtype per OpInfo, which the CPU allows or refuses as an overlap (even
where the two share no bytes: an empty `a`); the device must do as the CPU does.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.common_utils import noncontiguous_like

import suite_api
from comparison import to_device
from dispatch_capture import uncounted
from sides import NoReference, seed

from suitelib.opinfo import identity, judge, sample_variants, samples

DESCRIPTION = ("the out= variant: NaN-filled, non-contiguous, wrongly sized (resized, with the CPU's warning) "
               "and wrongly typed (rejected) out= tensors, and out= one of the inputs (allowed or refused as the "
               "CPU does)")

OUT_IS_INPUT_VARIANTS = 6  # per case: out= one of the inputs, from the first samples that have one


def applies(op, dtype: torch.dtype) -> bool:
    return op.supports_out


def _wrongly_sized(t: torch.Tensor) -> torch.Tensor:
    """test_out_warning's out=: the last dimension one longer ([2] for a scalar)."""
    shape = list(t.shape)
    shape = [2] if not shape else shape[:-1] + [shape[-1] + 1]
    return sample_variants.filled_like(torch.empty(shape, dtype=t.dtype))


_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$")


def _resize_warnings(caught) -> list[str]:
    return sorted(_TRIGGERED.sub("", str(w.message)) for w in caught if "resized" in str(w.message))


def _raw(op):
    return lambda s: op(s.input, *s.args, **s.kwargs)


def _check_out(case: judge.Case, inputs: list) -> None:
    op, device = case.op, case.ctx.device

    def call(sample, outs, spec):
        out = pytree.tree_unflatten(outs, spec)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            op(sample.input, *sample.args, **sample.kwargs, out=out)
        return sample.output_process_fn_grad(out), _resize_warnings(caught)

    aliased = 0  # out_is_input variants made
    for index, sample in enumerate(inputs):
        try:
            raw = case.cpu(lambda s: op(s.input, *s.args, **s.kwargs), sample)
            leaves, spec = pytree.tree_flatten(raw)
            if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
                # as test_out: an op that returns no tensors has nothing to write into
                case.first_cpu_error = case.first_cpu_error or f"the op returns {type(raw).__name__}, not tensors"
                raise NoReference("out= needs tensor outputs")
            filled = [sample_variants.filled_like(t) for t in leaves]
            expected, _ = case.cpu(lambda s: call(s, [t.clone() for t in filled], spec), sample)
        except NoReference:
            case.without_reference += 1
            continue
        dev_sample = samples.on_device(sample, device, case.op)

        def where(name: str, prop: str | None = None) -> dict[str, Any]:
            found = {"variant": name, "sample_index": index, "sample": sample}
            return {**found, "property": prop} if prop else found

        # out= full of NaN: its values must not matter
        w = where("out")
        actual, _ = case.device(lambda s: call(s, to_device(filled, device), spec), dev_sample, where=w)
        case.compare(actual, expected, w, again=case.again(lambda s: call(s, [t.clone() for t in filled], spec)[0],
                                                           sample))
        case.variants_compared += 1

        # a non-contiguous out=: written through its strides, its storage kept (where the CPU keeps them)
        w = where("out_noncontiguous")
        with uncounted():
            strided = [noncontiguous_like(t) for t in filled]
        layout = lambda outs: [(t.stride(), t.data_ptr()) for t in outs]  # noqa: E731
        outs = to_device(strided, device)
        before = layout(outs)
        actual, _ = case.device(lambda s: call(s, outs, spec), dev_sample, where=w)
        if layout(outs) != before:
            cpu_outs = [noncontiguous_like(t) for t in filled]
            cpu_before = layout(cpu_outs)
            try:
                case.cpu(lambda s: call(s, cpu_outs, spec), sample)
            except NoReference:
                cpu_before = None
            if cpu_before is not None and layout(cpu_outs) == cpu_before:
                raise case.fail(f"the non-contiguous out= was not written in place (the CPU writes it in place): "
                                f"strides and data pointers {before} became {layout(outs)}",
                                where("out_noncontiguous", "strides kept"))
        if case.against(actual, expected, w, lambda: case.cpu(
                lambda s: call(s, [noncontiguous_like(t) for t in filled], spec)[0], sample),
                case.again(lambda s: call(s, [noncontiguous_like(t) for t in filled], spec)[0], sample)):
            case.variants_compared += 1

        # a wrongly sized out=: resized, with the CPU's warning
        wrong = [_wrongly_sized(t) for t in leaves]
        try:
            cpu_resized, cpu_warnings = case.cpu(lambda s: call(s, [t.clone() for t in wrong], spec), sample)
        except NoReference:
            case.variants_without_reference += 1
        else:
            w = where("out_resized")
            actual, dev_warnings = case.device(lambda s: call(s, to_device(wrong, device), spec), dev_sample, where=w)
            case.compare(actual, cpu_resized, w, again=case.again(
                lambda s: call(s, [t.clone() for t in wrong], spec)[0], sample))
            if dev_warnings != cpu_warnings:
                raise case.fail(f"resizing a wrongly sized out= warned {dev_warnings or 'nothing'} on the device, "
                                f"{cpu_warnings or 'nothing'} on the CPU", where("out_resized", "resize warning"))
            case.variants_compared += 1

        # an out= dtype the CPU refuses to cast to (test_out's case four: int64 for floating results)
        if any(t.dtype.is_floating_point or t.dtype.is_complex for t in leaves):
            longs = [torch.zeros(t.shape, dtype=torch.long) for t in leaves]
            try:
                case.cpu(lambda s: call(s, [t.clone() for t in longs], spec), sample)
            except NoReference as refused:
                w = where("out_dtype", "unsafe cast rejected")
                try:
                    seed(case.ctx.seed)
                    call(dev_sample, to_device(longs, device), spec)
                except Exception:
                    case.variants_compared += 1
                else:
                    raise case.fail(f"the device wrote a floating-point result into an int64 out=, which the CPU "
                                    f"rejects ({str(refused.__cause__)[:300]})", w) from None
        # out= one of the inputs: the CPU decides whether that overlap is allowed
        if len(leaves) == 1 and case.dtype == sample_variants.representative_dtype(op):
            for position, variant in identity.out_is_input(op, sample, leaves[0]):
                if aliased >= OUT_IS_INPUT_VARIANTS:
                    break
                aliased += 1
                if identity.aliasing_decides(case, _raw(op), variant, identity.out_apart(variant)):
                    case.evidence["out_is_input_not_compared"] = case.evidence.get("out_is_input_not_compared", 0) + 1
                    continue
                case.alike(_raw(op), index, "out_is_input", variant, change=f"out= is input {position}")
        case.compared += 1


@suite_api.check("out", DESCRIPTION, applies=applies)
def run(case: judge.Case) -> None:
    _check_out(case, samples.generated(case.op, case.dtype, reference=False))
