"""One case's two sides, as every suite runs them: the CPU's reference and the device's run, each
seeded alike, and their comparison (comparison.py), keeping the worst errors seen. A suite's case
builds on `Sides`; a `Verdict` ends the case, a `NoReference` says the CPU itself could not run
something, so there is nothing to compare against."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch

from comparison import Mismatch, compare, own_copy
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


class Sides:
    """Runs each side seeded with the case's seed and compares them with the case's tolerance."""

    quiet = False  # silence warnings on both sides (a suite that compares warnings must not)

    def __init__(self, ctx, rtol: float, atol: float) -> None:
        self.ctx, self.rtol, self.atol = ctx, rtol, atol
        self.max_abs = self.max_rel = 0.0
        self.first_cpu_error = ""
        self.where: dict[str, Any] = {}  # where the case is (input, step, ...): part of every verdict

    def _seeded(self, run: Callable[..., Any], args: tuple) -> Any:
        seed(self.ctx.seed)
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
        """`run(*args)` on the device; an `error` Verdict with the exception and where the case is
        when it raises."""
        try:
            return self._seeded(run, args)
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**exception_evidence(exc), **self.where, **(where or {})}) from exc

    def compare(self, actual: Any, expected: Any, where: dict[str, Any] | None = None, *,
                values: bool = True) -> None:
        """A `fail` Verdict with the errors and where the case is when the device's result
        differs; the message starts with what was compared when `where` names it (`compared`)."""
        where = {**self.where, **(where or {})}
        try:
            abs_err, rel_err = compare(actual, expected, self.rtol, self.atol, values=values)
        except Mismatch as mismatch:
            message = str(mismatch)[:2000]
            if "compared" in where:
                message = f"{where['compared']}: {message}"
            raise Verdict(Outcome.FAIL, {"max_abs_error": mismatch.max_abs, "max_rel_error": mismatch.max_rel,
                                         **where, "message": message}) from None
        self.max_abs, self.max_rel = max(self.max_abs, abs_err), max(self.max_rel, rel_err)

    def compare_named(self, what: str, actual: Any, expected: Any) -> None:
        """compare(), saying what is compared (`compared`, and the message's start)."""
        self.compare(actual, expected, {"compared": what})
