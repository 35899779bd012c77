"""The OpInfo runs the ops suite's checks share with the compile and aten suites: the OpInfo
table, upstream's samples seeded as its tests seed them, the forward, backward and forward-mode
calls, the tolerances (upstream's decorators, then tolerances.json beside this file), and `Case`,
the comparison of a case's device runs with the CPU's (suites/ops/suite.py describes the checks).
"""

from __future__ import annotations

import contextlib
import math
import functools
import json
import random
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple

import numpy
import torch
import torch.utils._pytree as pytree
from torch.autograd import forward_ad as fwAD
from torch.testing._internal import common_utils
from torch.testing._internal.common_utils import noncontiguous_like
from torch.testing._internal.opinfo.core import SampleInput

from suitelib import info_decorators
from suitelib import opinfo
import suite_api
from comparison import LOW_PRECISION, Mismatch, compare, devices_of, own_copy, to_device
from dispatch_capture import uncounted
from evidence import describe_call, dtype_name, exception_evidence
from sides import NoReference, Sides, Verdict, uninitialized_memory_poisoned  # noqa: F401 (the suites' name)
from vocabulary import Outcome

from . import argument_variants, layouts, sample_variants

OVERRIDES_FILE = Path(__file__).with_name("tolerances.json")
PROJECT_SOURCE = "harness/worker/suitelib/opinfo/tolerances.json"  # a tolerance reviewed here, with a reason


subject_of = opinfo.subject


OPS = opinfo.by_subject()


def has_backward(op, dtype: torch.dtype) -> bool:
    """Whether the OpInfo's gradients are tested at the dtype: it supports autograd there."""
    return op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")


def case_rows(checks_for: Callable[[Any, torch.dtype], Iterable[str]]) -> Iterator[tuple[str, str, str]]:
    """(subject, dtype, check) of every OpInfo at each of its CPU dtypes, for the checks
    `checks_for(op, dtype)` gives: the rows of the ops and compile suites' listings."""
    for subject, op in sorted(OPS.items()):
        for dtype in sorted(op.supported_dtypes("cpu"), key=dtype_name):
            for check in checks_for(op, dtype):
                yield subject, dtype_name(dtype), check


def _project_overrides() -> dict[str, Any]:
    if not OVERRIDES_FILE.is_file():
        return {}
    data = json.loads(OVERRIDES_FILE.read_text())
    return data.get("overrides", {})


PROJECT_OVERRIDES = _project_overrides()


def tolerance(op, dtype: torch.dtype) -> tuple[float, float, str]:
    """(rtol, atol, source) for comparing this op's device results at dtype."""
    rtol, atol, source = info_decorators.tolerance(_upstream_decorations(op, dtype), dtype, "OpInfo")
    project = PROJECT_OVERRIDES.get(subject_of(op), {}).get(dtype_name(dtype))
    if project:
        rtol, atol = project.get("rtol", rtol), project.get("atol", atol)
        source = PROJECT_SOURCE
    return rtol, atol, source


def _upstream_decorations(op, dtype: torch.dtype):
    """The decorators OpInfo applies to TestCommon.test_compare_cpu at `dtype` on any device."""
    return info_decorators.decorations(op, dtype, "TestCommon", ["test_compare_cpu"])


def values_not_comparable(op, dtype: torch.dtype) -> str | None:
    """Upstream's reason when it skips comparing this op's values with the CPU, else None. It does
    not excuse the device (upstream skips for slow tests and flakes as well as for random outputs):
    it only makes the case ask the CPU first whether it reproduces its own result
    (Sides.values_suspect); the random check selects ops by it."""
    for decorator, _ in _upstream_decorations(op, dtype):
        probe = decorator(lambda: None) if callable(decorator) else None
        if getattr(probe, "__unittest_skip__", False):
            return str(getattr(probe, "__unittest_skip_why__", "")) or "skipped upstream"
    return None


def describe(sample) -> str:
    """A sample's inputs as evidence names them (evidence.describe_call)."""
    return describe_call([sample.input, *sample.args], sample.kwargs)


def tensors(sample) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if isinstance(t, torch.Tensor)]


@uncounted()  # the harness's CPU work, as all making of inputs
def noncontiguous(sample) -> SampleInput | None:
    """Upstream's SampleInput.noncontiguous() (the same values in strided storage; sparse tensors
    as they are), or None when it changes nothing: no strided tensor, or every one already
    non-contiguous."""
    variant = sample.transform(
        lambda t: noncontiguous_like(t) if isinstance(t, torch.Tensor) and t.layout == torch.strided else t)
    if all(a is b for a, b in zip(tensors(sample), tensors(variant))):
        return None
    return variant


# Arguments PyTorch requires on the CPU whatever the device (upstream's samples make them there for
# every device): positions in the sample's args, by OpInfo name. Reviewed: each is an error the
# op raises for a device tensor.
CPU_ARGUMENTS = {"tensor_split": (0,)}  # "expected tensor_indices_or_sections to be on cpu"


def on_device(sample, device: str, op=None):
    """The sample with its tensors moved to `device` (comparison.to_device: layouts kept), but the
    arguments PyTorch takes on the CPU alone (CPU_ARGUMENTS of `op`) kept there, and a `device=`
    argument naming the CPU (factory functions and *_like ops, generated for "cpu") naming
    `device`, as upstream's samples generated for the device under test would."""
    moved = to_device(sample, device)
    if not isinstance(moved, SampleInput):
        return moved
    if "device" in moved.kwargs and torch.device(moved.kwargs["device"]).type == "cpu":
        moved = sample_variants.rebuilt(moved, kwargs={**moved.kwargs, "device": device})
    if positions := CPU_ARGUMENTS.get(getattr(op, "name", None), ()):
        moved = sample_variants.rebuilt(moved, args=tuple(
            sample.args[i] if i in positions and isinstance(sample.args[i], torch.Tensor) else a
            for i, a in enumerate(moved.args)))
    return moved


def _indexed(device: torch.device) -> torch.device:
    """`device` with its index: the current one of its type where it names none."""
    return device if device.index is not None or device.type == "cpu" else \
        torch.device(device.type, torch.accelerator.current_device_index())


def names_cpu(sample) -> bool:
    """Whether an argument asks for a CPU result (a `device="cpu"`, `to("cpu")`)."""
    return any((isinstance(v, str) and v.split(":")[0] == "cpu") or (isinstance(v, torch.device) and v.type == "cpu")
               for v in pytree.tree_leaves([sample.args, sample.kwargs]))


def forward(op, sample):
    return sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))


class Call(NamedTuple):
    """What a call produced and what it changed: its result, and every tensor argument as the call
    left it (input, args, kwargs, in the sample's order, lists and dicts included), so that an
    argument the op writes (in place, out=, a side effect of a functional op) is compared with the
    CPU's like the result: what the CPU changed must change alike, what it left alone must stay."""
    result: Any
    arguments: list


def observed(run: Callable[[Any], Any]) -> Callable[[Any], Call]:
    """`run(sample)` returning the Call it made (its result and arguments after it)."""
    return lambda sample: Call(run(sample), tensors(sample))


def _differentiable(tensors) -> list[torch.Tensor]:
    return [t for t in tensors if isinstance(t, torch.Tensor) and t.requires_grad]


def grad_weights(output: torch.Tensor, index: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Fixed pseudo-random weights in [0.5, 1.5) of the output's shape, of `dtype`, on its device,
    a tensor of the caller's own: the same on both sides, and drawn from a generator of their own
    (the case's seeded ones are left alone)."""
    with uncounted():  # the harness's weights: their cast and copy to the device are no ops of the case's
        return _weights(tuple(output.shape), index).to(output.device, dtype=dtype, copy=True)


@functools.lru_cache(maxsize=64)
def _weights(shape: tuple[int, ...], index: int) -> torch.Tensor:
    """grad_weights' values, drawn once per shape: every variant of a sample, on both sides and in
    each gradient check, asks for the same ones (drawing them was a tenth of a backward case)."""
    generator = torch.Generator().manual_seed(7919 + index)
    return torch.rand(shape, generator=generator) + 0.5


def backward(op, sample, weighted: bool = False):
    """The gradients of every differentiable input of the sum of the outputs; `weighted`, of
    their sum weighted elementwise (grad_weights), so that the gradient reaching the op's
    backward is not all ones and a backward that ignores its values is wrong (the ops suite's
    backward check; the compile suite differentiates the plain sum)."""
    inputs = _differentiable(pytree.tree_leaves([sample.input, sample.args, sample.kwargs]))
    outputs = _differentiable(pytree.tree_leaves(forward(op, sample)))
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    # The gradients the loss's own backward would hand the op, handed to it directly: the sum,
    # products, casts and magnitudes that make the loss, and their backward, are the harness's,
    # and would be counted as the case's ops on the device.
    with uncounted():
        grads = [loss_gradient(o, i, weighted) for i, o in enumerate(outputs)]
    return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


def loss_gradient(output: torch.Tensor, index: int, weighted: bool) -> torch.Tensor:
    """The gradient of the loss backward() differentiates with respect to one output (the
    `index`th), a tensor of the caller's own: of the output's sum (weighted elementwise by
    grad_weights when `weighted`), the ones or the weights; of a complex output's magnitudes' sum,
    those times sgn(output), as abs's backward makes them. Call it with the capture aside."""
    if not output.is_complex():
        return grad_weights(output, index, output.dtype) if weighted else torch.ones_like(output)
    real = output.dtype.to_real()
    weights = grad_weights(output, index, real) if weighted else torch.ones_like(output, dtype=real)
    # made on the CPU: a device without complex arithmetic must fail in the op, not in the harness's sgn
    return (weights.cpu() * output.detach().cpu().sgn()).to(output.device)


def backward_from(op, sample, lay: Callable[[torch.Tensor], torch.Tensor]):
    """The gradients of every differentiable input for incoming gradients of fixed pseudo-random
    values (grad_weights) laid out by `lay`: what the op's backward is handed as it is (the
    layout axis of gradients, layouts.py)."""
    inputs = _differentiable(pytree.tree_leaves([sample.input, sample.args, sample.kwargs]))
    outputs = _differentiable(pytree.tree_leaves(forward(op, sample)))
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    with uncounted():  # the incoming gradients, laid out: the harness's
        grads = [lay(grad_weights(o, i, o.dtype)) for i, o in enumerate(outputs)]
    return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


def forward_ad(op, sample):
    with fwAD.dual_level():
        def dual(t):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                with uncounted():  # the primal and its tangent, the harness's
                    primal, tangent = t.detach(), torch.ones_like(t)
                return fwAD.make_dual(primal, tangent)
            return t

        s = sample.transform(dual)
        outputs = pytree.tree_leaves(op(s.input, *s.args, **s.kwargs))
        return [fwAD.unpack_dual(o).tangent for o in outputs if isinstance(o, torch.Tensor)]


def recordable(evidence: dict[str, Any]) -> dict[str, Any]:
    """A verdict's evidence as it is recorded: the sample it names described, not the object."""
    if isinstance(evidence.get("sample"), SampleInput):
        return {**evidence, "sample": describe(evidence["sample"])}
    return evidence


class Case(Sides):
    """One case being run: its op, dtype, tolerance, seed and device, what it compared so far."""

    def __init__(self, op, dtype: torch.dtype, ctx) -> None:
        rtol, atol, source = tolerance(op, dtype)
        super().__init__(ctx, rtol, atol)
        self.op, self.dtype = op, dtype
        self.evidence: dict[str, Any] = {"rtol": self.rtol, "atol": self.atol, "tolerance_source": source}
        self.values_suspect = values_not_comparable(op, dtype) is not None
        self.tolerance_overridden = source == PROJECT_SOURCE  # reviewed, with a reason
        self.compared = self.without_reference = self.variants_compared = self.variants_without_reference = 0
        self.errors_matched = self.errors_not_raised_on_cpu = 0  # alike(): inputs the CPU refuses
        self.edge_variants = 0
        self.layouts: set[str] = set()  # the layout kinds the case's samples were given (layouts.py)
        self.vacuous: str | None = None  # why the check had nothing to run, when it had nothing
        self._judged_at: dict[torch.dtype, tuple[float, float, str, bool]] = {}  # at_dtype(), by dtype
        self._atol_scaling: tuple[float, float] | None = None  # atol_scaled(): (the case's atol, factor)

    @contextlib.contextmanager
    def at_dtype(self, dtype: torch.dtype) -> Iterator[None]:
        """Judges what runs inside at `dtype`, the case's own dtype again after: its tolerance and
        whether upstream compares its values (values_suspect; the fuzz suite draws an example's
        dtype within one case). A verdict raised inside
        carries the tolerance it was judged with."""
        if dtype == self.dtype:
            yield
            return
        if dtype not in self._judged_at:
            self._judged_at[dtype] = (*tolerance(self.op, dtype), values_not_comparable(self.op, dtype) is not None)
        rtol, atol, source, suspect = self._judged_at[dtype]
        own = self.dtype, self.rtol, self.atol, self.values_suspect, self.tolerance_overridden
        self.dtype, self.rtol, self.atol, self.values_suspect = dtype, rtol, atol, suspect
        self.tolerance_overridden = source == PROJECT_SOURCE  # reviewed, with a reason
        try:
            yield
        except Verdict as verdict:
            for key, value in {"rtol": rtol, "atol": atol, "tolerance_source": source}.items():
                verdict.evidence.setdefault(key, value)  # an atol scaled inside (atol_scaled) stays
            raise
        finally:
            self.dtype, self.rtol, self.atol, self.values_suspect, self.tolerance_overridden = own

    @contextlib.contextmanager
    def atol_scaled(self, factor: float) -> Iterator[None]:
        """Inside, the absolute tolerance shrinks with the results (< 1: inputs scaled down by
        `factor`): each comparison's atol is the case's times the largest magnitude the CPU's
        result and arguments have, between `factor` and 1 (compare()). Results that shrink with
        their inputs get an atol as small (else every result of a tiny input, zero included, would
        pass); results that do not (a softmax and its gradient, about 0.2 at any scale) keep one in
        proportion to their size. A verdict raised inside carries the atol it was judged with."""
        if factor == 1.0:
            yield
            return
        self._atol_scaling = (self.atol, factor)
        try:
            yield
        except Verdict as verdict:
            own, _ = self._atol_scaling
            verdict.evidence.update({"atol": self.atol, "atol_scaled_by": self.atol / own if own else factor})
            raise
        finally:
            self.atol, _ = self._atol_scaling
            self._atol_scaling = None

    def _scaled_atol(self, expected: Any) -> None:
        """Under atol_scaled(): the atol for comparing with `expected` (its magnitudes)."""
        if self._atol_scaling is None:
            return
        own, factor = self._atol_scaling
        largest = max((t.detach().abs().max().item() for t in pytree.tree_leaves(expected)
                       if isinstance(t, torch.Tensor) and t.numel() and (t.is_floating_point() or t.is_complex())),
                      default=1.0)
        self.atol = own * min(1.0, max(factor, largest if math.isfinite(largest) else 1.0))

    def compare(self, actual, expected, where: dict[str, Any], *, values: bool = True,
                again: Callable[[], Any] | None = None, reference: Callable[[], Any] | None = None) -> None:
        """Sides.compare, after checking that a Call's result is where its inputs are."""
        if isinstance(actual, Call):
            self.outputs_where_inputs(actual, where)
        self._scaled_atol(expected)
        super().compare(actual, expected, where, values=values, again=again, reference=reference)

    def outputs_where_inputs(self, call: Call, where: dict[str, Any]) -> None:
        """Every tensor of the call's result on the device its inputs are on, type and index (a
        kernel without a device guard allocates on the current device; one that computes on the
        host may hand back a host tensor): the device, where no input is a device tensor and the
        call is given a device (a factory function); nothing is asked where the call names the
        CPU, has neither, or mixes devices."""
        sample = where.get("sample")
        if sample is not None and names_cpu(sample):
            return
        inputs = {d for d in devices_of(call.arguments) if d.type != "cpu"}
        host_operand = any(t.device.type == "cpu" for t in call.arguments)  # a gradient of it lives there
        if len(inputs) > 1 or (inputs and host_operand):
            return  # operands on two devices: ops_devices and the fuzz suite's placements judge those
        if not inputs and "device" not in getattr(sample, "kwargs", {}):
            return  # numbers in, a tensor out: PyTorch makes it on the CPU (add(2.0, 3.0))
        home = next(iter(inputs)) if inputs else _indexed(torch.device(self.ctx.device))
        for position, t in enumerate(o for o in pytree.tree_leaves(call.result) if isinstance(o, torch.Tensor)):
            if t.device != home:
                raise self.fail(f"output {position} is on {t.device}, not on {home} where the inputs are",
                                {**where, "property": "outputs on the inputs' device"})

    def fail(self, message: str, where: dict[str, Any]) -> Verdict:
        return Verdict(Outcome.FAIL, {"message": message, **where})

    def against(self, actual, expected, where: dict[str, Any], own: Callable[[], Any],
                again: Callable[[], Any] | None = None, reference: Callable[[], Any] | None = None) -> bool:
        """Compares a variant's device result with `expected`, the CPU's result for the sample the
        variant was made from. When they differ, `own()` runs the variant itself on the CPU: if
        the CPU's own result differs from `expected` too (an op whose result depends on the
        layout, such as as_strided, or a random op filling strided memory in another order), the
        device is judged against that; if the CPU cannot run the variant, there is no reference
        (False). `again` (Sides.again) reruns the variant on the CPU: the parts of its result the
        CPU does not reproduce are compared without values. Raises Verdict when the device is
        wrong."""
        try:
            self.compare(actual, expected, where, reference=reference)
            return True
        except Verdict as verdict:
            try:
                mine = own()
            except NoReference:
                self.variants_without_reference += 1
                return False
            try:
                compare(mine, expected, self.rtol, self.atol)
            except Mismatch:
                self.compare(actual, mine, where, again=again, reference=reference)
                return True
            if again is None:
                raise verdict from None
            # random or uninitialized parts, or the verdict
            self.compare(actual, expected, where, again=again, reference=reference)
            return True

    # a sample and its variants against one CPU reference
    def judge(self, run: Callable[[Any], Any], index: int, variants: Iterable[tuple[str, Any]],
              reference, expected: Any) -> None:
        """Runs each (name, CPU sample) variant on the device and compares it with `expected`, the
        CPU's result for the sample `reference` (see against()). A variant the device cannot run
        is an error unless the CPU cannot run it either (no reference)."""
        for name, variant in variants:
            where = {"variant": name, "sample_index": index, "sample": variant}
            try:
                actual = self.device(lambda s: run(on_device(s, self.ctx.device, self.op)), variant, where=where)
            except Verdict:
                if variant is reference:
                    raise
                try:
                    self.cpu(run, variant)
                except NoReference:
                    self.variants_without_reference += 1
                    continue
                raise
            again, precise = self.again(run, variant), self.precise(run, variant)
            if variant is reference:
                self.compare(actual, expected, where, again=again, reference=precise)
            elif not self.against(actual, expected, where, lambda: self.cpu(run, variant), again, precise):
                continue
            self.variants_compared += 1

    def precise(self, run: Callable[[Any], Any], variant) -> Callable[[], Any] | None:
        """For a low-precision case, `run` on the CPU with the variant's tensors of the case's
        dtype at float64 (float32 where the OpInfo has no float64 on the CPU): the reference that
        three-way judging measures both sides' errors against. None at other dtypes."""
        if self.dtype not in LOW_PRECISION:
            return None
        high = torch.float64 if torch.float64 in self.op.supported_dtypes("cpu") else torch.float32
        low = self.dtype

        def made() -> Any:
            with uncounted():
                raised = variant.transform(lambda t: t.detach().to(high).requires_grad_(t.requires_grad)
                                           if isinstance(t, torch.Tensor) and t.dtype == low else t)
                return self._seeded(run, (own_copy(raised),))
        return made

    def refused(self, run: Callable[[Any], Any], index: int, name: str, variant, refusal: NoReference) -> None:
        """A variant the CPU refuses (`refusal`): the device must refuse it too, with an error of
        the CPU's type (alike(): an accepted invalid input fails, the CPU's message its evidence),
        unless the CPU has no kernel for it at the dtype ("not implemented for"), which says
        nothing of the input's validity: then there is no reference."""
        if "not implemented for" in str(refusal):
            self.variants_without_reference += 1
            return
        self.alike(run, index, name, variant)

    def outputs_on(self, actual: Any, device: str, sample, where: dict[str, Any]) -> None:
        """Every tensor output on `device`, where the inputs are (unless the op asks for the CPU):
        a kernel without a device guard allocates on the current device."""
        if names_cpu(sample):
            return
        if isinstance(actual, Call):
            actual = actual.result
        for position, t in enumerate(o for o in pytree.tree_leaves(actual) if isinstance(o, torch.Tensor)):
            if t.device != torch.device(device):
                raise self.fail(f"output {position} is on {t.device}, not on {device} where the inputs are "
                                f"(the current device is {torch.accelerator.current_device_index()})",
                                {**where, "property": "outputs on the inputs' device"})

    def alike(self, run: Callable[[Any], Any], index: int, name: str, variant, *,
              error_type: type | None = None, error_regex: str | None = None, change: str | None = None,
              compare_accepted: bool = True, device: str | None = None) -> bool:
        """An input whose validity the CPU decides (an edge or invalid variant, an error input).
        Where the CPU raises, the device must raise an error of the CPU's type (and, given
        `error_regex`, with a message it matches); where the CPU returns, the device must return
        the same. `error_type` is what upstream says the input raises: when the CPU raises
        something else, or nothing, the input is not an error here. Without `compare_accepted` an
        input the CPU accepts is not run on the device at all: a generated invalid input that the
        CPU does not validate (an index past the end of a segment) reads arbitrary memory, and
        the device may rightly refuse it.
        Returns whether the CPU raised (and the device with it). `change` says how the variant
        was made. `device` places the variant on a device index of its own (the main device when
        None): then its outputs must be there too."""
        where = {"variant": name, "sample_index": index, "sample": variant, **({"change": change} if change else {})}
        placed = device or self.ctx.device
        try:
            # Under the capture, as the device's run: a dispatch mode changes what some composite
            # ops compute (linalg_eigvalsh and svdvals compute vectors too, isTensorSubclassLike),
            # and the two sides of an ill-conditioned input (the fuzz suite's) then differ.
            expected = self._seeded(run, (own_copy(variant),))  # what the CPU writes stays its own
            cpu_error = None
        except Exception as exc:
            expected, cpu_error = None, exc
        if cpu_error is not None and error_type is not None and not (
                isinstance(cpu_error, error_type) and re.search(error_regex or "", str(cpu_error))):
            self.errors_not_raised_on_cpu += 1  # upstream's expectation does not hold on this CPU
            return False
        if cpu_error is None:
            if error_type is not None:
                self.errors_not_raised_on_cpu += 1
            if compare_accepted:
                actual = self.device(lambda s: run(on_device(s, placed, self.op)), variant, where=where)
                if device is not None:
                    self.outputs_on(actual, device, variant, where)
                self.compare(actual, expected, where, again=self.again(run, variant),
                             reference=self.precise(run, variant))
                self.variants_compared += 1
            return False
        cpu_says = f"{type(cpu_error).__name__}: {str(cpu_error)[:300]}"
        try:
            self.waited_on_device(lambda s: run(on_device(s, placed, self.op)), variant)
        except Exception as exc:
            if isinstance(exc, NotImplementedError) and not isinstance(cpu_error, NotImplementedError):
                raise Verdict(Outcome.ERROR, {**exception_evidence(exc), **where}) from exc
            if not isinstance(exc, type(cpu_error)):
                raise self.fail(f"the device raised {type(exc).__name__} ({str(exc)[:300]}) where the CPU raises "
                                f"{cpu_says}", {**where, "property": "error type"}) from None
            if error_regex and not re.search(error_regex, str(exc)):
                raise self.fail(f"the device's error message {str(exc)[:300]!r} does not match upstream's "
                                f"{error_regex!r} (the CPU raises {cpu_says})",
                                {**where, "property": "error message"}) from None
            self.errors_matched += 1
            return True
        raise self.fail(f"the device returned a result where the CPU raises {cpu_says}",
                        {**where, "property": "raises"})

    def conclude(self) -> tuple[str, dict[str, Any]]:
        self.evidence.update({"inputs_compared": self.compared, "inputs_without_reference": self.without_reference,
                              "variants_compared": self.variants_compared,
                              "max_abs_error": self.max_abs, "max_rel_error": self.max_rel})
        if self.variants_without_reference:
            self.evidence["variants_without_reference"] = self.variants_without_reference
        if self.errors_matched:
            self.evidence["errors_matched"] = self.errors_matched
        if self.edge_variants:
            self.evidence["edge_variants"] = self.edge_variants
        if self.layouts:
            self.evidence["layouts"] = sorted(self.layouts)
        if self.accuracy.judged:
            self.evidence["accuracy"] = self.accuracy.evidence()
        if self.vacuous:
            self.evidence["not_applicable"] = self.vacuous
            return Outcome.PASS, self.evidence
        if self.compared == 0:
            return suite_api.no_reference(self.evidence, "sample input", self.first_cpu_error)
        return Outcome.UNVERIFIED if self.unverified(self.evidence) else Outcome.PASS, self.evidence

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        evidence = recordable(verdict.evidence)
        if verdict.outcome == Outcome.FAIL:
            evidence["first_failing_sample"] = evidence.get("sample_index")
        self.evidence.update(evidence)
        self.evidence["inputs_compared"] = self.compared
        if self.accuracy.judged:
            self.evidence["accuracy"] = self.accuracy.evidence()
        return verdict.outcome, self.evidence


def run_case(suite, case_id, ctx, infos: dict[str, Any], noun: str = "OpInfo") -> tuple[str, dict[str, Any]]:
    """One case of a suite of OpInfo checks (ops, foreach, fuzz): its OpInfo and dtype from
    `infos`, a Case, the check's run, the outcome and evidence."""
    op, dtype = suite_api.info_and_dtype(case_id, infos, noun)
    case = Case(op, dtype, ctx)
    try:
        suite.checks[case_id.check].run(case)
    except Verdict as verdict:
        return case.failed(verdict)
    return case.conclude()


def samples(op, dtype: torch.dtype, *, reference: bool, requires_grad: bool = False,
            limit: int | None = None) -> list:
    """op.reference_inputs("cpu", ...) (which are op.sample_inputs when the OpInfo has no
    reference_inputs_func) or op.sample_inputs("cpu", ...): the same samples, seeded the same way
    (the RNGs set to common_utils.SEED before each one, as TrackedInputIter does outside a test),
    without TrackedInputIter's cost per call (it inspects the whole stack to find a test) and per
    sample (torch.manual_seed also queues lazy seeds for CUDA, MPS and XPU).
    Reference inputs that upstream makes as `sample.noncontiguous()` of another sample (the
    elementwise ops' generators yield every sample twice, contiguous then not) are left out: the
    suite runs every sample non-contiguously itself, against the CPU result it already has.
    `limit`: only the first that many (the rest are not generated)."""
    make = op.reference_inputs_func if reference and op.reference_inputs_func is not None else op.sample_inputs_func
    samples, twins = [], set()
    with _twins_marked(twins), uncounted():  # CPU tensors made by the harness: no op of the case's
        generated = iter(make(op, "cpu", dtype, requires_grad))
        while limit is None or len(samples) < limit:
            value = common_utils.SEED
            torch.default_generator.manual_seed(value)
            random.seed(value)
            numpy.random.seed(value)
            try:
                sample = next(generated)
            except StopIteration:
                break
            if id(sample) not in twins:
                samples.append(sample)
            twins.clear()
    return samples


def gradient_samples(op, dtype: torch.dtype, *, reference: bool, limit: int | None = None) -> list:
    """samples() requiring grad, every tensor made the leaf it is on the device (to_device), with
    the same layout: upstream generates them under no_grad, where a view (a transposed or expanded
    input) requires grad without being a leaf the graph reaches. What the gradient checks and the
    fuzz suite's backward examples differentiate."""
    made = samples(op, dtype, reference=reference, requires_grad=True, limit=limit)
    with uncounted():
        return [s.transform(lambda t: t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t)
                for s in made]


@contextlib.contextmanager
def _twins_marked(twins: set[int]):
    """While generating, SampleInput.noncontiguous() notes the id of what it returns in `twins`
    (SampleInput has __slots__: it cannot carry a mark of its own)."""
    original = SampleInput.noncontiguous

    def noncontiguous(self):
        twin = original(self)
        twins.add(id(twin))
        return twin

    SampleInput.noncontiguous = noncontiguous
    try:
        yield
    finally:
        SampleInput.noncontiguous = original


def check_gradient_layouts(case: Case, samples: list,
                           differentiate: Callable[[Any, Any, Callable[[torch.Tensor], torch.Tensor]], Any]
                           = backward_from) -> None:
    """backward and gradgrad: the first samples' gradients with every incoming gradient in each
    layout kind (`differentiate(op, sample, lay)` hands the op's backward gradients laid out by
    `lay`), each against the CPU given the same gradients (upstream's test_noncontiguous_samples
    hands the backward a non-contiguous gradient; a backward kernel that reads it in storage order
    is right only for contiguous ones)."""
    if (why := layouts.not_at(case.op, case.dtype)) is not None:
        case.evidence.setdefault("layouts_not_run", why)  # backward says it once for both
        return
    for index, sample in enumerate(samples[:layouts.SAMPLES_PER_CASE] if layouts.apply_to(case.op, case.dtype)
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


def check_forward(case: Case) -> None:
    """The ops suite's `forward` check (suites/ops/ops_forward.py says what it runs)."""
    check_values(case, lambda s: forward(case.op, s), samples(case.op, case.dtype, reference=True),
                 with_variants=True, edges=True, arguments=True)


def check_backward(case: Case) -> None:
    """The ops suite's `backward` check (suites/ops/ops_autograd.py says what it runs)."""
    try:
        inputs = gradient_samples(case.op, case.dtype, reference=True)
    except Exception as exc:  # upstream's reference inputs are made for forward tests
        case.evidence["inputs"] = (f"sample inputs: the reference inputs cannot require grad "
                                   f"({type(exc).__name__}: {str(exc)[:200]})")
        inputs = gradient_samples(case.op, case.dtype, reference=False)
    check_values(case, lambda s: backward(case.op, s, weighted=True), inputs, with_variants=True, arguments=True)
    check_gradient_layouts(case, inputs)


def check_values(case: Case, run: Callable[[Any], Any], samples: list, with_variants: bool,
                 edges: bool = False, arguments: bool = False) -> None:
    """forward, backward, forward_ad: each sample (and its non-contiguous variant) against the
    CPU's result for the sample; with `edges`, also its edge variants (a zero-size dimension,
    0-dim tensor scalars), which the CPU may refuse: then the device must refuse them alike;
    with `arguments`, the arguments no sample moves off their default, at other values
    (argument_variants). Every run is observed: its result and the arguments it left (Call)."""
    run = observed(run)
    if with_variants and (why := layouts.not_at(case.op, case.dtype)) is not None:
        case.evidence["layouts_not_run"] = why
        with_variants = False
    laid_out = with_variants and layouts.apply_to(case.op, case.dtype)  # once: it reads the decorators
    for index, sample in enumerate(samples):
        try:
            expected = case.cpu(run, sample)
        except NoReference:
            case.without_reference += 1  # no CPU reference for this sample: nothing to compare against
            continue
        variants: list[tuple[str, Any]] = [("sample", sample)]
        if with_variants and (nc := noncontiguous(sample)) is not None:
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
    for index, name, variant in argument_variants.variants(case.op, samples) if arguments else ():
        try:
            expected = case.cpu(run, variant)
        except NoReference as refused:  # a value the CPU refuses for this sample: so must the device
            case.refused(run, index, name, variant, refused)
            continue
        case.judge(run, index, [(name, variant)], variant, expected)
        varied.add(name.removeprefix("argument "))
    if varied:
        case.evidence["arguments_varied"] = sorted(varied)
