"""The judge of one OpInfo case: `Case`, a case's device runs against the CPU's (sides.Sides) at
the OpInfo's tolerance (tolerances.py), at its dtype or, `at_dtype`, at another; a sample and its
variants against one CPU reference (judge()), inputs whose validity the CPU decides (alike()), and
the outcome and evidence it concludes. cases() is the case type of a suite of OpInfo checks (ops,
compile, foreach, fuzz): the registry makes each case with it; the aten suite makes its own Case.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any, Callable, Iterable, Iterator

import torch
import torch.utils._pytree as pytree
from torch.testing._internal.opinfo.core import SampleInput

import suite_api
from comparison import LOW_PRECISION, Mismatch, compare, devices_of, own_copy
from dispatch_capture import uncounted
from evidence import dtype_name, exception_evidence
from sides import NoReference, Sides, Verdict
from vocabulary import Outcome

from . import calls, samples, tolerances


def _indexed(device: torch.device) -> torch.device:
    """`device` with its index: the current one of its type where it names none."""
    return device if device.index is not None or device.type == "cpu" else \
        torch.device(device.type, torch.accelerator.current_device_index())


def recordable(evidence: dict[str, Any]) -> dict[str, Any]:
    """A verdict's evidence as it is recorded: the sample it names described, not the object."""
    if isinstance(evidence.get("sample"), SampleInput):
        return {**evidence, "sample": samples.describe(evidence["sample"])}
    return evidence


class Case(Sides):
    """One case being run: its op, dtype, tolerance, seed and device, what it compared so far."""

    def __init__(self, op, dtype: torch.dtype, ctx) -> None:
        tolerance = self.tolerance_at(op, dtype, ctx)
        super().__init__(ctx, tolerance.rtol, tolerance.atol)
        self.op, self.dtype = op, dtype
        self.evidence: dict[str, Any] = {"rtol": self.rtol, "atol": self.atol, "tolerance_source": tolerance.source}
        self.values_suspect = tolerances.values_not_comparable(op, dtype) is not None
        self.tolerance_overridden = tolerance.reviewed  # a skip list's entry, with a reason
        self.compared = self.without_reference = self.variants_compared = self.variants_without_reference = 0
        self.errors_matched = self.errors_not_raised_on_cpu = 0  # alike(): inputs the CPU refuses
        self.edge_variants = 0
        self.layouts: set[str] = set()  # the layout kinds the case's samples were given (layouts.py)
        self.vacuous: str | None = None  # why the check had nothing to run, when it had nothing
        self._judged_at: dict[torch.dtype, tuple[tolerances.Tolerance, bool]] = {}  # at_dtype(), by dtype
        self._atol_scaling: tuple[float, float] | None = None  # atol_scaled(): (the case's atol, factor)

    @staticmethod
    def tolerance_at(op, dtype: torch.dtype, ctx) -> tolerances.Tolerance:
        """The tolerance the op's values at `dtype` are compared with in this case (a case judged
        outside a run, with no context, has no tolerance entry)."""
        return tolerances.lookup(op, dtype, None if ctx is None else ctx.reviewed_tolerance(dtype_name(dtype)))

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
            self._judged_at[dtype] = (self.tolerance_at(self.op, dtype, self.ctx),
                                      tolerances.values_not_comparable(self.op, dtype) is not None)
        (rtol, atol, source, reviewed), suspect = self._judged_at[dtype]
        own = self.dtype, self.rtol, self.atol, self.values_suspect, self.tolerance_overridden
        self.dtype, self.rtol, self.atol, self.values_suspect = dtype, rtol, atol, suspect
        self.tolerance_overridden = reviewed
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
        if isinstance(actual, calls.Call):
            self.outputs_where_inputs(actual, where)
        self._scaled_atol(expected)
        super().compare(actual, expected, where, values=values, again=again, reference=reference)

    def outputs_where_inputs(self, call: calls.Call, where: dict[str, Any]) -> None:
        """Every tensor of the call's result on the device its inputs are on, type and index (a
        kernel without a device guard allocates on the current device; one that computes on the
        host may hand back a host tensor): the device, where no input is a device tensor and the
        call is given a device (a factory function); nothing is asked where the call names the
        CPU, has neither, or mixes devices."""
        sample = where.get("sample")
        if sample is not None and samples.names_device(sample, "cpu"):
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
                actual = self.device(lambda s: run(samples.on_device(s, self.ctx.device, self.op)), variant,
                                     where=where)
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
        if samples.names_device(sample, "cpu"):
            return
        if isinstance(actual, calls.Call):
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
                actual = self.device(lambda s: run(samples.on_device(s, placed, self.op)), variant, where=where)
                if device is not None:
                    self.outputs_on(actual, device, variant, where)
                self.compare(actual, expected, where, again=self.again(run, variant),
                             reference=self.precise(run, variant))
                self.variants_compared += 1
            return False
        cpu_says = f"{type(cpu_error).__name__}: {str(cpu_error)[:300]}"
        try:
            self.waited_on_device(lambda s: run(samples.on_device(s, placed, self.op)), variant)
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


def cases(infos: Callable[[], dict[str, Any]], noun: str = "OpInfo",
          kind: Callable[..., Case] = Case) -> Callable[[suite_api.CaseId, Any], Case]:
    """The case type of a suite of OpInfo checks (SUITE.makes_cases(...)): the OpInfo and dtype a case id
    names, from `infos()`, made a Case (of the suite's own `kind`, the compile suite's); the
    KeyError of suite_api.unknown() when there is no such OpInfo or dtype."""
    def make(case_id: suite_api.CaseId, ctx) -> Case:
        op, dtype = suite_api.info_and_dtype(case_id, infos(), noun)
        return kind(op, dtype, ctx)
    return make
