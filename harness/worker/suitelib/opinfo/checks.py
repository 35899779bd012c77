"""The checks of values more than one suite runs: the ops suite's `forward` and `backward` checks
(check_forward, check_backward), which the fuzz suite runs too, to know whether a dtype and
direction already fail there; and what they are made of, which the ops suite's `forward_ad` and
`gradgrad` checks use as well: each sample, its variants and layouts against the CPU
(check_values), and the gradients with every incoming gradient laid out (check_gradient_layouts).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from comparison import Mismatch, compare
from sides import NoReference

from . import argument_variants, calls, judge, layouts, sample_variants, samples


def check_forward(case: judge.Case) -> None:
    """The ops suite's `forward` check (suites/ops/ops_forward.py says what it runs)."""
    check_values(case, lambda s: calls.forward(case.op, s), samples.generated(case.op, case.dtype, reference=True),
                 with_variants=True, edges=True, arguments=True)


def check_backward(case: judge.Case) -> None:
    """The ops suite's `backward` check (suites/ops/ops_autograd.py says what it runs)."""
    try:
        inputs = samples.differentiable(case.op, case.dtype, reference=True)
    except Exception as exc:  # upstream's reference inputs are made for forward tests
        case.evidence["inputs"] = (f"sample inputs: the reference inputs cannot require grad "
                                   f"({type(exc).__name__}: {str(exc)[:200]})")
        inputs = samples.differentiable(case.op, case.dtype, reference=False)
    check_values(case, lambda s: calls.backward(case.op, s, weighted=True), inputs, with_variants=True, arguments=True)
    check_gradient_layouts(case, inputs)


def check_values(case: judge.Case, run: Callable[[Any], Any], inputs: list, with_variants: bool,
                 edges: bool = False, arguments: bool = False) -> None:
    """forward, backward, forward_ad: each sample (and its non-contiguous variant) against the
    CPU's result for the sample; with `edges`, also its edge variants (a zero-size dimension,
    0-dim tensor scalars), which the CPU may refuse: then the device must refuse them alike;
    with `arguments`, the arguments no sample moves off their default, at other values
    (argument_variants). Every run is observed: its result and the arguments it left (Call)."""
    run = calls.observed(run)
    if with_variants and (why := layouts.not_at(case.op, case.dtype)) is not None:
        case.evidence["layouts_not_run"] = why
        with_variants = False
    laid_out = with_variants and layouts.apply_to(case.op, case.dtype)  # once: it reads the decorators
    for index, sample in enumerate(inputs):
        try:
            expected = case.cpu(run, sample)
        except NoReference:
            case.without_reference += 1  # no CPU reference for this sample: nothing to compare against
            continue
        variants: list[tuple[str, Any]] = [("sample", sample)]
        if with_variants and (nc := samples.noncontiguous(sample)) is not None:
            variants.append(("noncontiguous", nc))
        own: list[tuple[str, Any]] = []  # layouts with values of their own: each its own reference
        for kind, variant, same_values in layouts.sample_layouts(sample) if laid_out and \
                index < layouts.SAMPLES_PER_CASE else ():
            (variants if same_values else own).append((kind, variant))
        case.judge(run, index, variants, sample, expected)
        for kind, variant in own:
            try:  # the run returns the CPU's own copy of the variant (Sides.cpu) too: what it wrote there
                reference, ran = case.cpu(lambda s: (run(s), s), variant)
            except NoReference as refused:
                case.refused(run, index, kind, variant, refused)
                continue
            if layouts.writes_into_overlap(variant, ran):
                case.evidence["layouts_not_run"] = f"{kind}: the op writes into an argument"
                continue
            try:  # the same values, dense: where the CPU's own result differs, the values are ill-conditioned
                compare(case.cpu(run, layouts.dense(variant)), reference, case.rtol, case.atol)
            except (NoReference, Mismatch):
                case.evidence["layouts_not_run"] = (f"{kind}: the CPU's result for these values depends on their "
                                                    f"layout (ill-conditioned, such as a variance of 0)")
                continue
            case.judge(run, index, [(kind, variant)], variant, reference)
            case.layouts.add(kind)
        case.layouts.update(name for name, _ in variants[1:])
        if edges:
            for name, variant in [*sample_variants.zero_size(sample), *sample_variants.zero_dim(sample)]:
                if (why := sample_variants.undefined_on_cpu(case.op, name)) is not None:
                    case.evidence["edge_variants_not_made"] = f"{name}: {why}"
                    continue
                case.alike(run, index, name, variant)
                case.edge_variants += 1
        case.compared += 1
    varied: set[str] = set()
    for index, name, variant in argument_variants.variants(case.op, inputs) if arguments else ():
        try:
            expected = case.cpu(run, variant)
        except NoReference as refused:  # a value the CPU refuses for this sample: so must the device
            case.refused(run, index, name, variant, refused)
            continue
        case.judge(run, index, [(name, variant)], variant, expected)
        varied.add(name.removeprefix("argument "))
    if varied:
        case.evidence["arguments_varied"] = sorted(varied)


def check_gradient_layouts(case: judge.Case, inputs: list,
                           differentiate: Callable[[Any, Any, Callable[[torch.Tensor], torch.Tensor]], Any]
                           = calls.backward_from) -> None:
    """backward and gradgrad: the first samples' gradients with every incoming gradient in each
    layout kind (`differentiate(op, sample, lay)` hands the op's backward gradients laid out by
    `lay`), each against the CPU given the same gradients (upstream's test_noncontiguous_samples
    hands the backward a non-contiguous gradient; a backward kernel that reads it in storage order
    is right only for contiguous ones)."""
    if (why := layouts.not_at(case.op, case.dtype)) is not None:
        case.evidence.setdefault("layouts_not_run", why)  # backward says it once for both
        return
    for index, sample in enumerate(inputs[:layouts.SAMPLES_PER_CASE] if layouts.apply_to(case.op, case.dtype)
                                   else ()):
        for kind in layouts.KINDS:
            run = lambda s, lay=layouts.gradient(kind): differentiate(case.op, s, lay)  # noqa: E731
            dense = lambda s, lay=layouts.gradient(kind): differentiate(  # noqa: E731
                case.op, s, lambda g: lay(g).contiguous())
            try:
                expected = case.cpu(run, sample)
                compare(case.cpu(dense, sample), expected, case.rtol, case.atol)
            except NoReference:
                case.variants_without_reference += 1
                continue
            except Mismatch:  # the CPU's own gradients depend on the incoming one's layout
                case.evidence["layouts_not_run"] = (f"grad_{kind}: the CPU's result depends on the incoming "
                                                    f"gradient's layout")
                continue
            case.judge(run, index, [(f"grad_{kind}", sample)], sample, expected)
            case.layouts.add(f"grad_{kind}")
