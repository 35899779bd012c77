"""One case's two sides, as every suite runs them: the CPU's reference and the device's run, each
seeded alike, and their comparison (comparison.py), keeping the worst errors seen. A suite's case
builds on `Sides`; a `Verdict` ends the case, a `NoReference` says the CPU itself could not run
something, so there is nothing to compare against.

Values are compared wherever the CPU determines them. Where the device differs, a comparison given
`again` (the CPU's run once more: another seed, new memory poisoned) asks the CPU whether it
determines its own result: the parts that differ between its two runs are random or
uninitialized, and of those only structure, shapes and dtypes must match. What was not compared is
kept (`values_not_compared`): such a case is `unverified`, never a pass."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator

import torch
import torch.utils._python_dispatch

from comparison import Accuracy, Mismatch, compare, differing_parts, leaf_paths, own_copy
from dispatch_capture import uncounted
from evidence import exception_evidence
from vocabulary import Outcome


def seed(value: int) -> None:
    """torch.manual_seed for the generators a case uses, the CPU's and the device's, without its
    cost per call (it also queues lazy seeds for CUDA, MPS and XPU, formatting a stack each time)."""
    torch.default_generator.manual_seed(value)
    torch.random._seed_custom_device(value)


def seed_no_absent_accelerator() -> None:
    """Makes torch.manual_seed leave alone the accelerators this torch is built without. For each
    of CUDA, XPU and MTIA it queues the seed for when the device initializes, with a formatted
    stack, and a device this torch is built without never does: upstream's wrapper_set_seed, which
    every random OpInfo's call goes through, spent 2.5 % of an ops worker's time there."""
    for module in (torch.cuda, torch.xpu, torch.mtia):
        if not module._is_compiled():
            module.manual_seed_all = _no_device_to_seed


def _no_device_to_seed(seed: int) -> None:
    del seed


class NoReference(Exception):
    """The CPU itself cannot run this: there is nothing to compare against."""


class Verdict(Exception):
    """The case's outcome, decided at the first thing that failed."""

    def __init__(self, outcome: str, evidence: dict[str, Any]) -> None:
        super().__init__(outcome)
        self.outcome, self.evidence = outcome, evidence


class Stage(Exception):
    """An exception, with the stage of a case it happened in (build, move, cpu_reference, device):
    a whole model's case charges the CPU's own failures to the harness, the device's to the device."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.stage, self.cause = stage, cause


def both(stage_cpu: Callable[[], Any], stage_device: Callable[[], Any]) -> tuple[Any, Any]:
    """The CPU's part, then the device's: their results, or Stage naming the side that raised."""
    try:
        expected = stage_cpu()
    except Exception as exc:
        raise Stage("cpu_reference", exc) from exc
    try:
        actual = stage_device()
    except Exception as exc:
        raise Stage("device", exc) from exc
    return expected, actual


class Sides:
    """Runs each side seeded with the case's seed and compares them with the case's tolerance."""

    quiet = False  # silence warnings on both sides (a suite that compares warnings must not)
    values_suspect = False  # whether compare() asks the CPU to reproduce its result before comparing
    tolerance_overridden = False  # a reviewed rtol/atol that passes a low-precision result too

    def __init__(self, ctx, rtol: float, atol: float) -> None:
        self.ctx, self.rtol, self.atol = ctx, rtol, atol
        self.max_abs = self.max_rel = 0.0
        self.first_cpu_error = ""
        self.values_not_compared: list[dict[str, Any]] = []  # where compare() could not compare values
        self.accuracy = Accuracy()  # what three-way judging of low precision measured (comparison.py)
        self.where: dict[str, Any] = {}  # where the case is (input, step, ...): part of every verdict

    def _seeded(self, run: Callable[..., Any], args: tuple, value: int | None = None) -> Any:
        seed(self.ctx.seed if value is None else value)
        if not self.quiet:
            return run(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(*args)

    def cpu(self, run: Callable[..., Any], *args: Any) -> Any:
        """`run(*args)` on the CPU (the op capture steps aside) over its own copy of the tensors in
        `args` (comparison.own_copy), so that what the CPU writes into them never reaches the
        device's run of the same inputs; NoReference when it raises (the first such error is kept)."""
        try:
            with uncounted():
                return self._seeded(run, tuple(own_copy(a) for a in args))
        except Exception as exc:
            self.first_cpu_error = self.first_cpu_error or f"{type(exc).__name__}: {str(exc)[:300]}"
            raise NoReference(f"{type(exc).__name__}: {str(exc)[:500]}") from exc

    def device(self, run: Callable[..., Any], *args: Any, where: dict[str, Any] | None = None) -> Any:
        """`run(*args)` on the device, waiting for what it queued (an asynchronous device raises an
        op's error at the next synchronizing call: this one, not a later call's); an `error`
        Verdict with the exception and where the case is when it raises."""
        try:
            return self.waited_on_device(run, *args)
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**exception_evidence(exc), **self.where, **(where or {})}) from exc

    def waited_on_device(self, run: Callable[..., Any], *args: Any) -> Any:
        """`run(*args)` on the device, seeded, then waiting for what it queued: an asynchronous
        device raises an op's error at the next synchronizing call, which must be this call's, not
        a later one's. Raises what the device raises."""
        result = self._seeded(run, args)
        self.ctx.synchronize()
        return result

    def again(self, run: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        """The CPU's run of `run(*args)` once more, for compare(again=): with another seed (also
        where the call seeds itself: upstream's wrapper_set_seed calls torch.manual_seed(42)) and
        every new CPU allocation poisoned (uninitialized_memory_poisoned), so that what the
        inputs do not determine comes out different. A plain rerun often gets the first run's
        freed blocks back, garbage and all, and agrees by chance."""
        def rerun(poisoned: bool = True) -> Any:
            with uncounted(), uninitialized_memory_poisoned() if poisoned else empty_zeroed(), reseeded_by(1):
                return self._seeded(run, tuple(own_copy(a) for a in args), self.ctx.seed + 1)
        return rerun

    def compare(self, actual: Any, expected: Any, where: dict[str, Any] | None = None, *,
                values: bool = True, again: Callable[[], Any] | None = None,
                reference: Callable[[], Any] | None = None) -> None:
        """A `fail` Verdict with the errors and where the case is when the device's result
        differs; the message starts with what was compared when `where` names it (`compared`).
        Given `again` (Sides.again), the parts of the result the CPU does not reproduce are
        compared without their values, and noted (values_not_compared): asked first where
        `values_suspect` (upstream does not compare the op's values: the verdict must not depend
        on whether arbitrary bytes happen to agree), else only where the device differs. Without
        `again`, the values of a suspect op that differ go uncompared, and are noted as such.
        Given `reference` (the call at high precision), low-precision parts are judged three ways
        (comparison.three_way)."""
        where = {**self.where, **(where or {})}
        ask = values and again is not None
        undetermined = self._undetermined(expected, again) if ask and self.values_suspect else set()
        judged = {"reference": reference, "accuracy": self.accuracy, "fixed_too": self.tolerance_overridden}
        try:
            abs_err, rel_err = compare(actual, expected, self.rtol, self.atol, values=values,
                                       structure_only=undetermined.__contains__ if undetermined else None, **judged)
        except Mismatch as mismatch:
            if undetermined or not values:
                raise self._failed(mismatch, where) from None
            if ask and not self.values_suspect:
                undetermined = self._undetermined(expected, again)
            elif not ask and self.values_suspect:  # nothing to ask the CPU with: the values go unseen
                undetermined = set(leaf_paths(expected))
                where = {**where, "not_asked": "the check cannot rerun the CPU; upstream does not compare "
                                              "the op's values"}
            if not undetermined:
                raise self._failed(mismatch, where) from None
            try:
                abs_err, rel_err = compare(actual, expected, self.rtol, self.atol,
                                           structure_only=undetermined.__contains__, **judged)
            except Mismatch as still:
                raise self._failed(still, where) from None
        if undetermined:
            self.values_not_compared.append({**{k: v for k, v in where.items() if k != "sample"},
                                             "parts": sorted(undetermined)})
        self.max_abs, self.max_rel = max(self.max_abs, abs_err), max(self.max_rel, rel_err)

    def _undetermined(self, expected: Any, again: Callable[..., Any]) -> set[str]:
        """The parts of `expected` the CPU's second run (`again`) does not reproduce. For an op
        upstream does not compare (values_suspect), a third run whose empty* factories hand out
        zeros where the poisoned run agreed (empty_zeroed)."""
        try:
            differing = differing_parts(expected, again(), self.rtol, self.atol)
            if not differing and self.values_suspect:
                differing = differing_parts(expected, again(poisoned=False), self.rtol, self.atol)
            return differing
        except Exception:  # noqa: BLE001 - the CPU ran it once: its result stands
            return set()

    def _failed(self, mismatch: Mismatch, where: dict[str, Any]) -> Verdict:
        message = str(mismatch)[:2000]
        if "compared" in where:
            message = f"{where['compared']}: {message}"
        return Verdict(Outcome.FAIL, {"max_abs_error": mismatch.max_abs, "max_rel_error": mismatch.max_rel,
                                      **where, "message": message})

    def unverified(self, evidence: dict[str, Any]) -> bool:
        """Notes in `evidence` what was compared without its values (values_not_compared: how
        many results, the first), and whether there was any: then the case is `unverified`."""
        if not self.values_not_compared:
            return False
        first = self.values_not_compared[0]
        evidence["values_not_compared"] = {
            "results": len(self.values_not_compared), "first": first,
            "why": "the CPU's own result differs from run to run (another seed, new memory poisoned): "
                   "random or uninitialized values; structure, shapes and dtypes matched"}
        return True

    def compare_named(self, what: str, actual: Any, expected: Any) -> None:
        """compare(), saying what is compared (`compared`, and the message's start)."""
        self.compare(actual, expected, {"compared": what})


@contextlib.contextmanager
def uninitialized_memory_poisoned() -> Iterator[None]:
    """Every tensor the CPU allocates meanwhile starts as NaN (integers: their largest value)
    instead of what the memory held: PyTorch's fill_uninitialized_memory, which takes effect in
    deterministic mode (warn_only: an op without a deterministic kernel runs as usual)."""
    was, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill
        torch.use_deterministic_algorithms(was, warn_only=warn_only)


@contextlib.contextmanager
def reseeded_by(offset: int) -> Iterator[None]:
    """torch.manual_seed(s) seeds with s + offset meanwhile: a call that seeds itself draws other
    numbers, so that its randomness shows."""
    original = torch.manual_seed
    torch.manual_seed = lambda value: original(int(value) + offset)
    try:
        yield
    finally:
        torch.manual_seed = original


class _EmptyZeroed(torch.utils._python_dispatch.TorchDispatchMode):
    """The empty* factories return zeros: what uninitialized_memory_poisoned fills with the
    largest value, True, reads 0, False here."""

    FACTORIES = frozenset({torch.ops.aten.empty.memory_format, torch.ops.aten.empty_strided.default,
                           torch.ops.aten.empty_like.default, torch.ops.aten.new_empty.default,
                           torch.ops.aten.new_empty_strided.default, torch.ops.aten.empty_permuted.default})

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in self.FACTORIES and isinstance(out, torch.Tensor):
            out.zero_()
        return out


@contextlib.contextmanager
def empty_zeroed() -> Iterator[None]:
    """The empty* factories hand out zeros meanwhile (a bool or integer in uninitialized memory
    poisons to True or its largest value, which the first run's garbage may hold too)."""
    with _EmptyZeroed():
        yield
