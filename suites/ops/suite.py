"""The operator suite: every OpInfo of the installed torch's op_db, at every dtype the op
supports on the CPU, checked on the device against the CPU, with the inputs PyTorch's own tests
use (TestCommon.test_compare_cpu, test_noncontiguous_samples, test_out, and the in-place part of
test_variant_consistency_eager).

Case ids: ops/<subject>/<dtype>/<check>, subject = OpInfo name plus ".variant_test_name".
Checks:
  forward     every reference input (op.reference_inputs: the sample inputs plus, where the
              OpInfo has them, upstream's larger set: non-contiguous, broadcasting, extremal
              values), each run as generated and again non-contiguously (upstream's
              SampleInput.noncontiguous(): same values, strided storage), on the device against
              the CPU; and each sample's edge variants (ops_inputs: a zero-size dimension,
              0-dim tensor scalars), which the CPU may refuse: then the device must refuse them
              with the same error type (Case.alike); and the arguments no sample moves off their
              default, at other values (ops_arguments)
  extremal    (floating dtypes) the sample inputs with NaN, +inf, -inf and -0.0 planted in every
              floating-point tensor input, and large magnitudes for elementwise ops defined for
              them; NaN positions must match exactly and infinities by sign
  out         the out= variant (OpInfos with supports_out), as test_out does: an out= full of
              NaN (or the largest integer), a non-contiguous out= (its strides and storage kept),
              a wrongly sized out= (resized, with the CPU's warning), and an out= dtype the CPU
              rejects (int64 for floating results) rejected on the device too
  inplace     the in-place variant (OpInfos that have one): it returns self, keeps self's
              storage, computes the CPU's values, leaves the other inputs untouched, and writes
              through a view of a larger tensor without touching the rest of it
  backward    gradients of every input over the reference inputs, as generated and
              non-contiguously, and over the argument variants (OpInfos that support autograd,
              at dtypes with backward support), of the outputs' sum weighted by fixed
              pseudo-random weights, so the gradient the op's backward gets is not all ones
  forward_ad  forward-mode jvp compared (OpInfos with supports_forward_ad)
and the checks of the modules in CHECK_MODULES, each described in its module's docstring:
  layout      output dtype, shape, device, strides where PyTorch defines them, view-ness
              (ops_layout.py)
  errors      upstream's error_inputs and invalid variants of the samples (ops_errors.py)
  gradgrad    double backward (ops_gradgrad.py)
  random      (ops_random.py; random ops by name or upstream's "non-deterministic", reviewed,
              at their floating dtypes) sub-checks seeded, successive, reseeded, rng_state,
              generator, distribution: the device generator seeded alike reproduces a draw and
              advances, get/set_rng_state and torch.Generator(device) replay it, and 10^4 draws
              match the CPU's (means and variances within 5 standard errors, two-sample KS p >=
              1e-4); the statistics are recorded
  autocast    (ops_autocast.py; OpInfos whose aten op has a kernel for AutocastPrivateUse1, at
              float32 and bfloat16) under torch.autocast(device_type=<device>, dtype=<the
              backend's autocast dtype>) the result has the dtype the backend's declared policy
              (autocast_policy()) gives and the values the CPU computes on the inputs cast so
  sdpa        (ops_sdpa.py; scaled_dot_product_attention) boolean and float masks, is_causal,
              scale, enable_gqa, dropout 0, against the float64 math reference
The CPU reference is computed once per sample and reused for its variants; a variant is run on
the CPU itself only when the device disagrees with that reference (an op whose result depends on
the layout, such as as_strided or view, is judged against the CPU at the same layout). Evidence
names the variant that failed first, the sample's index and a description of it.
Tolerances: torch.testing's per-dtype defaults, the OpInfo's own toleranceOverride /
precisionOverride decorators that apply to every test or to TestCommon.test_compare_cpu, then
suites/ops/tolerances.json. The tolerance used and its source are part of the evidence; what
"differs" means is harness/worker/comparison.py's, shared with the other suites.
"""

from __future__ import annotations

import importlib
import math
import re
import warnings
from typing import Any, Iterable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.common_utils import noncontiguous_like
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, SampleInput, UnaryUfuncInfo

import suite_api
from comparison import to_device
from public_api import opinfo_api
from sides import NoReference, Verdict, seed

from . import ops_inputs
from . import opinfo_runs as runs

# Checks that live in modules of their own beside this file (ops_<check>.py), each with
# DESCRIPTION (a sentence for describe_suite), applies(op, dtype) -> bool (whether the check has
# a case for the OpInfo at the dtype) and run(case) (raises Verdict or returns).
CHECK_MODULES: dict[str, Any] = {name: importlib.import_module(f"{__package__}.ops_{name}") for name in (
    "layout", "errors", "gradgrad", "random", "autocast", "sdpa",
)}

CHECKS = ("forward", "out", "inplace", "backward", "forward_ad", "extremal", *CHECK_MODULES)
# Checks of autograd and autocast features beyond the op itself: they do not decide whether its
# public API works (api-compat), the report shows them per check.
FEATURE_CHECKS = ("forward_ad", "gradgrad", "autocast", "sdpa")


def describe_suite() -> dict[str, Any]:
    """What the suite declares of itself (suites/README.md): reports render from it."""
    return {
        "noun": "OpInfo",
        "nouns": "OpInfos",
        "checks": {
            "forward": "every reference input, as generated and non-contiguous, run on the device and on the CPU, "
                       "results compared",
            "out": "the out= variant: NaN-filled, non-contiguous, wrongly sized (resized, with the CPU's warning) "
                   "and wrongly typed (rejected) out= tensors",
            "inplace": "the in-place variant: returns self, writes self and through a view, leaves other inputs "
                       "untouched",
            "backward": "gradients of every input, over the reference inputs as generated and non-contiguous",
            "forward_ad": "forward-mode jvp",
            "extremal": "NaN, +inf, -inf and -0.0 (and large magnitudes for elementwise ops) planted in the inputs; "
                        "NaN positions and infinities' signs must match the CPU's",
            **{name: module.DESCRIPTION for name, module in CHECK_MODULES.items()},
        },
        "native_phrase": "run natively at every dtype and check",
    }






def checks_for(op, dtype: torch.dtype) -> list[str]:
    checks = ["forward"]
    if op.supports_out:
        checks.append("out")
    if op.inplace_variant is not None:
        checks.append("inplace")
    grad_dtypes = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
    if dtype in grad_dtypes:
        checks.append("backward")
        if op.supports_forward_ad:
            checks.append("forward_ad")
    if dtype.is_floating_point:
        checks.append("extremal")
    checks += [name for name, module in CHECK_MODULES.items() if module.applies(op, dtype)]
    return checks


def list_cases() -> Iterable[dict[str, str]]:
    yield from suite_api.cases("ops", runs.case_rows(checks_for))


def public_api() -> dict[str, Any]:
    """The public names each OpInfo tests in eager mode (harness/worker/public_api.py)."""
    return opinfo_api("eager", (check for check in CHECKS if check not in FEATURE_CHECKS))


# --- tolerances ---------------------------------------------------------------------------











# --- inputs -------------------------------------------------------------------------------







def _is_elementwise(op) -> bool:
    return isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo))


def _large(dtype: torch.dtype) -> float:
    """Upstream's largest "large value" for the dtype (generate_elementwise_binary_large_value_tensors)."""
    return 13437.7 if dtype == torch.float16 else 1e20


def planted(op, sample, index: int) -> Iterator[tuple[str, SampleInput]]:
    """The extremal variants of a sample: every strided floating-point tensor input with special values at
    every third element (in logical order). "nan": NaN there. "inf": +inf and -inf alternating
    there (which sign comes first alternates between samples), -0.0 at the elements after them.
    "large": large magnitudes of alternating sign, for elementwise ops defined for them
    (upstream's handles_large_floats). Samples without a floating-point tensor have none."""
    if not any(t.layout == torch.strided and t.dtype.is_floating_point and t.numel() for t in runs.tensors(sample)):
        return
    sign = 1.0 if index % 2 == 0 else -1.0
    kinds = [("nan", (math.nan, math.nan), None), ("inf", (sign * math.inf, -sign * math.inf), -0.0)]
    if _is_elementwise(op) and getattr(op, "handles_large_floats", True):
        kinds.append(("large", None, None))
    for kind, pair, after in kinds:
        def plant(t, pair=pair, after=after):
            if not isinstance(t, torch.Tensor) or t.layout != torch.strided or not t.dtype.is_floating_point \
                    or not t.numel():
                return t
            big = _large(t.dtype)
            a, b = pair if pair is not None else (sign * big, -sign * big)
            flat = t.detach().reshape(-1).clone()
            flat[0::6] = a
            flat[3::6] = b
            if after is not None:
                flat[1::3] = after
            result = t.detach().clone()
            result.copy_(flat.view(t.shape))
            return result.requires_grad_(t.requires_grad)
        yield kind, sample.transform(plant)




def _filled_like(t: torch.Tensor) -> torch.Tensor:
    """test_out's case zero: NaN for floating-point and complex tensors, the largest value for
    integers, True for bool; out= values must not affect the result."""
    if t.dtype.is_floating_point or t.dtype.is_complex:
        value: Any = math.nan
    elif t.dtype == torch.bool:
        value = True
    else:
        value = torch.iinfo(t.dtype).max
    return torch.full(t.shape, value, dtype=t.dtype)


def _wrongly_sized(t: torch.Tensor) -> torch.Tensor:
    """test_out_warning's out=: the last dimension one longer ([2] for a scalar)."""
    shape = list(t.shape)
    shape = [2] if not shape else shape[:-1] + [shape[-1] + 1]
    return _filled_like(torch.empty(shape, dtype=t.dtype))


def _copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of `t` over a copy of its whole storage, with its sizes, strides and offset: what
    comparison.to_device gives the device, on the CPU (ops that see the storage, such as
    as_strided_, find the same elements on both sides)."""
    if t.layout != torch.strided or t.is_conj() or t.is_neg():
        return t.clone()
    copy = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage().clone(), t.storage_offset(), t.shape, t.stride())
    return copy.requires_grad_(t.requires_grad)


def _storage_of(t: torch.Tensor) -> torch.Tensor:
    """The whole storage under `t`, as a 1-d tensor of its dtype."""
    storage = t.untyped_storage()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, 0, (storage.nbytes() // t.element_size(),))


# --- running ------------------------------------------------------------------------------











_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$")








def _check_extremal(case: runs.Case, samples: list) -> None:
    run = lambda s: runs.forward(case.op, s)  # noqa: E731
    planted_any = 0
    for index, sample in enumerate(samples):
        for kind, variant in planted(case.op, sample, index):
            planted_any += 1
            try:
                expected = case.cpu(run, variant)
            except NoReference:
                case.without_reference += 1
                continue
            case.judge(run, index, [(kind, variant)], variant, expected)
            case.compared += 1
    case.evidence["samples_planted"] = planted_any
    if not planted_any:  # e.g. factory functions: nothing to plant special values in
        case.vacuous = "no sample input has a floating-point tensor to plant special values in"


def _resize_warnings(caught) -> list[str]:
    return sorted(_TRIGGERED.sub("", str(w.message)) for w in caught if "resized" in str(w.message))


def _check_out(case: runs.Case, samples: list) -> None:
    op, device = case.op, case.ctx.device

    def call(sample, outs, spec):
        out = pytree.tree_unflatten(outs, spec)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            op(sample.input, *sample.args, **sample.kwargs, out=out)
        return sample.output_process_fn_grad(out), _resize_warnings(caught)

    for index, sample in enumerate(samples):
        try:
            raw = case.cpu(lambda s: op(s.input, *s.args, **s.kwargs), sample)
            leaves, spec = pytree.tree_flatten(raw)
            if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
                # as test_out: an op that returns no tensors has nothing to write into
                case.first_cpu_error = case.first_cpu_error or f"the op returns {type(raw).__name__}, not tensors"
                raise NoReference("out= needs tensor outputs")
            filled = [_filled_like(t) for t in leaves]
            expected, _ = case.cpu(lambda s: call(s, [t.clone() for t in filled], spec), sample)
        except NoReference:
            case.without_reference += 1
            continue
        dev_sample = runs.on_device(sample, device, case.op)

        def where(name: str, prop: str | None = None) -> dict[str, Any]:
            found = {"variant": name, "sample_index": index, "sample": sample}
            return {**found, "property": prop} if prop else found

        # out= full of NaN: its values must not matter
        w = where("out")
        actual, _ = case.device(lambda s: call(s, to_device(filled, device), spec), dev_sample, where=w)
        case.compare(actual, expected, w)
        case.variants_compared += 1

        # a non-contiguous out=: written through its strides, its storage kept (where the CPU keeps them)
        w = where("out_noncontiguous")
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
                lambda s: call(s, [noncontiguous_like(t) for t in filled], spec)[0], sample)):
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
            case.compare(actual, cpu_resized, w)
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
        case.compared += 1


def _check_inplace(case: runs.Case, samples: list) -> None:
    op, device = case.op, case.ctx.device

    def call(sample):
        returned = op.inplace_variant(sample.input, *sample.args, **sample.kwargs)
        return returned, sample

    def fresh(sample):  # a copy the CPU may modify, keeping every tensor's layout and storage
        return sample.transform(lambda t: _copy(t) if isinstance(t, torch.Tensor) else t)

    for index, sample in enumerate(samples):
        if not isinstance(sample.input, torch.Tensor):
            case.without_reference += 1
            continue
        view_sample = ops_inputs.rebuilt(sample, input=noncontiguous_like(sample.input.detach().clone()))
        dev_sample, dev_view_sample = runs.on_device(sample, device, case.op), runs.on_device(view_sample, device, case.op)
        try:
            copy = fresh(sample)
            cpu_storage = copy.input.untyped_storage().data_ptr()
            returned, cpu_sample = case.cpu(call, copy)
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
            case.compare(target, cpu_sample.input, where("inplace", "values of self"))
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
            copy = fresh(sample)
            _, cpu_view = case.cpu(call, SampleInput(view_sample.input, args=copy.args, kwargs=copy.kwargs))
        except NoReference:
            case.variants_without_reference += 1
        else:
            w = where("inplace_view", "writes through a view")
            case.device(lambda s: op.inplace_variant(s.input, *s.args, **s.kwargs), dev_view_sample, where=w)
            case.compare(_storage_of(dev_view_sample.input), _storage_of(cpu_view.input), w)
            case.variants_compared += 1
        case.compared += 1


def run_case(case_id: str, ctx) -> tuple[str, dict[str, Any]]:
    _, subject, dtype_str, check = parsed = suite_api.parse(case_id, "ops", CHECKS)
    op, dtype = suite_api.info_and_dtype(parsed, runs.OPS, "OpInfo")
    case = runs.Case(op, dtype, ctx)
    try:
        if check == "forward":
            runs.check_values(case, lambda s: runs.forward(op, s),
                          runs.samples(op, dtype, reference=True), with_variants=True, edges=True, arguments=True)
        elif check == "backward":
            # Reference inputs are generated under no_grad: a view made there (a transposed or
            # expanded input) requires grad without being a leaf the graph reaches. Make every such
            # tensor the leaf it is on the device (to_device), with the same layout.
            try:
                samples = runs.samples(op, dtype, reference=True, requires_grad=True)
            except Exception as exc:  # upstream's reference inputs are made for forward tests
                case.evidence["inputs"] = (f"sample inputs: the reference inputs cannot require grad "
                                           f"({type(exc).__name__}: {str(exc)[:200]})")
                samples = runs.samples(op, dtype, reference=False, requires_grad=True)
            samples = [s.transform(lambda t: t.detach().requires_grad_(t.requires_grad)
                                   if isinstance(t, torch.Tensor) else t) for s in samples]
            runs.check_values(case, lambda s: runs.backward(op, s, weighted=True), samples, with_variants=True,
                          arguments=True)
        elif check == "forward_ad":
            runs.check_values(case, lambda s: runs.forward_ad(op, s),
                          runs.samples(op, dtype, reference=False, requires_grad=True), with_variants=False)
        elif check == "extremal":
            _check_extremal(case, runs.samples(op, dtype, reference=False))
        elif check == "out":
            _check_out(case, runs.samples(op, dtype, reference=False))
        elif check == "inplace":
            _check_inplace(case, runs.samples(op, dtype, reference=False))
        else:
            CHECK_MODULES[check].run(case)
    except Verdict as verdict:
        return case.failed(verdict)
    return case.conclude()
