"""The fuzz suite: a differential fuzzer over every OpInfo (op_db and upstream's _foreach_* OpInfos).
From the op's own samples, Hypothesis draws compositions of the input axes (TRANSFORMS: the layout
kinds, values scaled across the dtype's range or shifted by a large common offset, a zero-size
dimension, 0-dim scalars, one tensor in two places, out= one of the inputs, an argument no sample
moves off its default, lists of 33 or 130 tensors), a placement (PLACEMENTS: the main device; the
second device while the first is current; one operand left on the CPU or on another device index),
a dtype (any the OpInfo supports on the CPU, the samples generated at it) and a direction (forward,
or backward: the gradients of every differentiable input, as the ops suite's backward check
computes them, where the OpInfo supports autograd at the dtype). It runs each on the device against
the CPU with the ops suite's judge (Case.alike: the CPU decides validity; where it raises, the
device must raise the same type; where it returns, the results must match within the drawn dtype's
tolerance; operands on two devices must be refused as CUDA refuses them), and on a failure shrinks
it to the shortest chain on the earliest sample that still fails, at the case's own dtype and
forward where they still fail.

Case ids: fuzz/<OpInfo>/<dtype>/examples, one dtype per OpInfo (float32, else its first): the
case's own dtype, drawn half the time and first. At another dtype, or backward, where the OpInfo
fails the ops suite's forward or backward check at that dtype, that failure is known: it is its
own case's to report (ops/<OpInfo>/<dtype>/<check>, which skip lists name), not this one's, whose
id names another dtype. An example there is still run and judged against it: failing as the ops
check fails (its outcome, and its first failing op or exception type) is the known failure
(`known_failures_matched` counts them); failing otherwise is a new failure behind the known one,
reported here with the ops check's failure as `known_failure`.
Options: `max_examples` (default 25) examples per case; `seconds_per_op` (default 3) stops drawing
new examples once a case has run that long (`budget_exhausted` in the evidence: the search was
cut short). Deterministic under `--seed`: the search is seeded with it (and the case id), draws
dtypes from a fixed order (the case's own, then the others by name), keeps no example database,
and `repro CASE_ID` reruns the same search to the same example (unless the time budget cut it at
another point).
Evidence: `fuzz` (seed, examples run, how often each transform and placement was applied, each
dtype and direction drawn, the examples that failed as the ops suite's check fails at their
setting, the dtypes and directions upstream makes no sample at, whether the budget cut the search
short); a failure adds `chain` (the shrunk example, in order: its dtype unless the case's,
the transforms, the placement unless the main device, `backward` for gradients), `sample_index`,
the failing sample's shapes and strides (`sample`) and the drawn dtype's tolerance (`rtol`,
`atol`), and the judge's message names the first differing element.
"""

from __future__ import annotations

import time
import zlib
from collections import Counter
from functools import cache
from typing import Any, Callable, Iterable

import torch

import suite_api
from evidence import dtype_name
from sides import NoReference, Verdict
from vocabulary import Outcome, Where

from suitelib import opinfo
from suitelib.opinfo import argument_variants, identity, layouts, placements, runs, sample_variants

SAMPLES = 8  # of the op's samples, the first (Hypothesis draws one; shrinking prefers the earliest)
CHAIN = 3  # transforms composed at most
PICKS = 8  # which operand, argument value or tensor pair a transform or placement takes, modulo their number

SUITE = suite_api.Suite(
    __name__, noun="OpInfo", nouns="OpInfos", native_phrase="run natively on every fuzzed input",
    options={"max_examples": {"type": "int", "default": 25, "help": "examples drawn per case"},
             "seconds_per_op": {"type": "float", "default": 3.0,
                                "help": "a case draws no new example after running this long (the nightly's budget)"}},
    # the nightly's budget: 200 examples an OpInfo, at most 10 s each
    nightly={"options": {"max_examples": 200, "seconds_per_op": 10.0}})


class Settings:
    max_examples = 25
    seconds_per_op = 3.0


@SUITE.configures
def configure(options: dict[str, Any]) -> None:
    if int(options["max_examples"]) < 1:
        raise ValueError(f"--suite-option max_examples={options['max_examples']}: must be at least 1")
    if float(options["seconds_per_op"]) <= 0:
        raise ValueError(f"--suite-option seconds_per_op={options['seconds_per_op']}: must be positive")
    Settings.max_examples, Settings.seconds_per_op = int(options["max_examples"]), float(options["seconds_per_op"])


@cache
def infos() -> dict[str, Any]:
    return {**opinfo.by_subject(), **opinfo.foreach_by_subject()}


def _floats(sample, change: Callable[[torch.Tensor], torch.Tensor]):
    """Every non-empty floating-point tensor of the sample changed by `change` (None: there is none)."""
    changed = []

    def each(t: Any) -> Any:
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            changed.append(True)
            with torch.no_grad():
                return change(t.detach()).requires_grad_(t.requires_grad)
        return t
    variant = sample.transform(each)
    return variant if changed else None


def atol_scale(applied: list[str]) -> float:
    """How much the transforms applied shrink the magnitudes an example's results may have: the
    product of the scalings below 1 (scaled_2^-24: 2^-24). The absolute tolerance shrinks with
    them; else every result of a tiny input is within a fixed atol of zero, the wrong result too."""
    factor = 1.0
    for name in applied:
        if name.startswith("scaled_2^") and (power := int(name.removeprefix("scaled_2^"))) < 0:
            factor *= 2.0 ** power
    return factor


# The list ops (beyond the _foreach_* ones) whose result grows linearly with their list: the others
# (meshgrid, cartesian_prod, block_diag, einsum) grow as a product of it, and 130 tensors would not
# fit in memory.
LIST_OPS = ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
            "broadcast_tensors", "atleast_1d", "atleast_2d", "atleast_3d")


def _lengthened(op, sample, length: int):
    """The sample with its list of tensors (and every argument list as long: the other tensor
    lists, scalar lists) grown to `length` by repeating it, each tensor its own copy; for the
    _foreach_* ops and LIST_OPS."""
    if not (op.name.startswith("_foreach_") or op.name in LIST_OPS):
        return None
    if (not isinstance(sample.input, (list, tuple)) or not sample.input or len(sample.input) >= length
            or not all(isinstance(t, torch.Tensor) for t in sample.input)):
        return None
    n = len(sample.input)

    def grow(v: Any) -> Any:
        if not isinstance(v, (list, tuple)) or len(v) != n:
            return v
        return [x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x
                for x in (v[i % n] for i in range(length))]
    return sample_variants.rebuilt(sample, input=grow(sample.input), args=tuple(grow(a) for a in sample.args),
                                   kwargs={k: grow(v) for k, v in sample.kwargs.items()})


# Transforms not made for an OpInfo at a dtype (reviewed, measured on plain CPU tensors): the CPU's
# own kernel takes longer than a case's whole budget on the values they make, and an example cannot
# be stopped halfway. OpInfo name -> (dtypes, transforms, why).
SLOW_ON_CPU: dict[str, tuple[frozenset[torch.dtype], frozenset[str], str]] = {
    name: (frozenset({torch.float64}), frozenset({"scaled_2^8", "scaled_2^24"}),
           "the CPU's float64 polygamma of order 2 and up (the orders every polygamma sample passes) takes time "
           "proportional to large negative inputs: about 1 s an element at -2^24 (scaled_2^24, or scaled_2^8 "
           "three times), minutes a sample")
    for name in ("polygamma", "special.polygamma")}


def _too_slow_on_cpu(op, dtype: torch.dtype, transform: str) -> bool:
    dtypes, transforms, _ = SLOW_ON_CPU.get(op.name, (frozenset(), frozenset(), ""))
    return dtype in dtypes and transform in transforms


class Transforms:
    """The transforms of one case: name -> (sample, pick) -> variant, or None where the transform
    changes nothing of the sample. Simplest first: Hypothesis shrinks towards the start."""

    NAMES = ("noncontiguous", "permuted", "offset", "expanded", "channels_last", "zero_size", "zero_dim",
             "scaled_2^8", "scaled_2^-8", "scaled_2^24", "scaled_2^-24", "shifted_2^10",
             "same_tensor_twice", "out_is_input", "argument", "length_33", "length_130")

    def __init__(self, case: runs.Case, samples: list, run: Callable[[Any], Any]) -> None:
        self.case, self.run = case, run
        try:
            moved = argument_variants.never_moved(case.op, samples)
            self.arguments = [(name, value) for name, default in moved.items()
                              for value in argument_variants.values_for(case.op, name, default)]
        except Exception:  # an OpInfo whose parameters cannot be read: no argument transform
            self.arguments = []

    def apply(self, name: str, sample, pick: int):
        if name in layouts.KINDS or name == "channels_last":
            return layouts.laid_out(sample, name)
        if name in ("zero_size", "zero_dim"):
            made = list(getattr(sample_variants, name)(sample))
            return made[pick % len(made)][1] if made else None
        if name.startswith("scaled_2^"):  # exact: magnitudes across the dtype's range
            power = int(name.removeprefix("scaled_2^"))
            return _floats(sample, lambda t: t * 2.0 ** power)
        if name == "shifted_2^10":  # a large common offset (where a cancelling kernel loses its digits)
            return _floats(sample, lambda t: t + 1024)
        if name == "same_tensor_twice":
            made = [(v, apart) for _, v, apart in identity.same_tensor_twice(sample)]
            return self._aliasing_defined(*made[pick % len(made)]) if made else None
        if name == "out_is_input":
            return self._out_is_input(sample, pick)
        if name == "argument":
            if not self.arguments:
                return None
            argument, value = self.arguments[pick % len(self.arguments)]
            return sample_variants.rebuilt(sample, kwargs={**sample.kwargs, argument: value})
        return _lengthened(self.case.op, sample, int(name.removeprefix("length_")))

    def _aliasing_defined(self, variant, apart):
        """The aliased variant, unless the CPU's result depends on the aliasing (undefined)."""
        return None if identity.aliasing_decides(self.case, self.run, variant, apart) else variant

    def _out_is_input(self, sample, pick: int):
        if not self.case.op.supports_out:
            return None
        try:
            output = self.case.cpu(self.run, sample)
        except NoReference:
            return None
        if not isinstance(output, torch.Tensor):
            return None  # out= of one tensor only: where it is an input is the question
        made = [v for _, v in identity.out_is_input(self.case.op, sample, output)]
        return self._aliasing_defined(made[pick % len(made)], identity.out_apart(made[pick % len(made)])) \
            if made else None


# Where the example's tensors live. The main device first: Hypothesis shrinks towards it.
PLACEMENTS = ("device", "other_device", "cpu_operand", "other_device_operand")


def _setting_name(dtype: torch.dtype, backward: bool) -> str:
    """A setting as evidence names it: `float64/backward`."""
    return f"{dtype_name(dtype)}/{'backward' if backward else 'forward'}"


class Setting:
    """What an example runs at besides its sample, chain and placement: one of the OpInfo's CPU
    dtypes and a direction, forward or backward (the gradients of every differentiable input, as
    the ops suite's backward check computes them). Its samples, run and transforms are made the
    first time an example draws it."""

    def __init__(self, case: runs.Case, dtype: torch.dtype, backward: bool) -> None:
        op = case.op
        self.dtype, self.backward = dtype, backward
        self.samples = (runs.gradient_samples(op, dtype, reference=False, limit=SAMPLES) if backward
                        else runs.samples(op, dtype, reference=False, limit=SAMPLES))
        result: Callable[[Any], Any] = ((lambda s: runs.backward(op, s, weighted=True)) if backward
                                        else (lambda s: op(s.input, *s.args, **s.kwargs)))
        self.run = runs.observed(result)  # judged: the result and the arguments it left
        self.transforms = Transforms(case, self.samples, result)  # aliasing: the results alone
        self.name = _setting_name(dtype, backward)
        self.named_dtype = [dtype_name(dtype)] if dtype != case.dtype else []  # in the chain
        # The case's own setting (its dtype, forward) reports every failure; another only where the
        # OpInfo passes the ops suite's check of its dtype and direction (the module's docstring).
        self.own = dtype == case.dtype and not backward
        self._known: dict[str, Any] | None = None
        self._known_asked = False

    def chain(self, applied: list[str], placement: str) -> list[str]:
        """The example as its evidence names it, in order: the dtype unless it is the case's, the
        transforms applied, the placement unless it is the main device, `backward` for gradients."""
        return self.named_dtype + applied + ([placement] if placement != "device" else []) + \
            (["backward"] if self.backward else [])

    def known_failure(self, case: runs.Case) -> dict[str, Any] | None:
        """How the OpInfo fails the ops suite's forward or backward check at this dtype (its outcome,
        exception type, first failing op and message, as a skip-list entry records it), run once
        on a Case of its own; None where it passes (or cannot have its values compared). A check
        the harness itself cannot run says nothing: None."""
        if not self._known_asked:
            self._known_asked = True
            check = runs.check_backward if self.backward else runs.check_forward
            probe = runs.Case(case.op, self.dtype, case.ctx)
            try:
                check(probe)
                outcome, evidence = probe.conclude()
            except Verdict as verdict:
                outcome, evidence = verdict.outcome, verdict.evidence
            except Exception:  # noqa: BLE001 - the ops suite's own run would record it as the harness's error
                outcome, evidence = Outcome.PASS, {}
            # a failure of the harness or the CPU reference (no sample had a reference) is not the
            # device's: nothing is known to fail there
            if outcome not in (Outcome.PASS, Outcome.UNVERIFIED) and evidence.get("where") != Where.HARNESS:
                self._known = {"outcome": outcome, "exception_type": evidence.get("exception_type"),
                               "failing_op": evidence.get("failing_op"),
                               "message": str(evidence.get("message", "")).split("\n")[0][:300]}
        return self._known


def _fails_as(known: dict[str, Any], verdict: Verdict) -> bool:
    """Whether an example's failure is the known one: the same outcome and exception type, and,
    where either names a first failing op, the same op (any overload of it) or the same message
    once each names its own op out of it (a device refusing a dtype refuses it in whichever op an
    example reaches first: "aten::add.Scalar: complex128 is not supported" where the check met
    "aten::mul.Scalar: complex128 is not supported"). A wrong value is a wrong value."""
    found = verdict.evidence
    if verdict.outcome != known["outcome"] or known["exception_type"] != found.get("exception_type"):
        return False
    ops = str(known["failing_op"] or ""), str(found.get("failing_op") or "")
    if not any(ops):
        return True
    family = lambda op: op.split(".")[0].rstrip("_")  # noqa: E731 - aten::add_.Tensor: aten::add
    if family(ops[0]) == family(ops[1]):
        return True
    first_line = str(found.get("message", "")).split("\n")[0][:300]
    return bool(all(ops)) and known["message"].replace(ops[0], "") == first_line.replace(ops[1], "")


@suite_api.check("examples", "Hypothesis-drawn compositions of dtypes, gradients, layouts, value scales and offsets, "
                 "edge shapes, argument identity and values, list lengths and device placements over the op's "
                 "samples, device against CPU, shrunk to the shortest failing chain")
def examples(case: runs.Case) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed, settings, strategies as st
    from hypothesis.errors import Flaky

    own = Setting(case, case.dtype, False)
    if not own.samples:
        case.vacuous = "the OpInfo has no sample at this dtype"
        return
    made: dict[tuple[torch.dtype, bool], Setting | None] = {(case.dtype, False): own}
    without_samples: list[str] = []

    def setting(dtype: torch.dtype, backward: bool) -> Setting | None:
        """The setting drawn (forward where the OpInfo has no gradients at the dtype); None where
        upstream makes no sample for it."""
        key = (dtype, backward and runs.has_backward(case.op, dtype))
        if key not in made:
            try:
                made[key] = Setting(case, *key)
            except Exception:  # upstream's generator refuses the dtype, or samples requiring grad
                made[key] = None
            if made[key] is None or not made[key].samples:
                made[key] = None
                without_samples.append(_setting_name(*key))
        return made[key]

    # The case's own dtype half the time, and first (Hypothesis shrinks towards it): the other axes
    # keep half their examples at the dtype the case names. Else one of the others, in a fixed
    # order (by name), so that the same seed draws the same examples.
    others = sorted((d for d in case.op.supported_dtypes("cpu") if d != case.dtype), key=dtype_name)
    dtypes = st.one_of(st.just(case.dtype), st.sampled_from(others)) if others else st.just(case.dtype)
    devices = placements.device_count(case.ctx.device)
    started, drawn = time.monotonic(), [0]
    counts: dict[str, Counter[str]] = {"transforms": Counter(), "dtypes": Counter(), "directions": Counter()}
    counts["known_failures_matched"] = Counter()
    failure: dict[str, Any] = {}
    budget = {"exhausted": False}

    def attempt(at: Setting, index: int, chain: list[str], placement: str, pick: int) -> list[str]:
        """Runs the example at the setting: the names it applied (the placement too, unless the main
        device), or a Verdict whose evidence names its `chain`."""
        index %= len(at.samples)  # another dtype's generator may make fewer samples
        with case.at_dtype(at.dtype):
            variant, applied = at.samples[index], []
            for name in chain:
                if sample_variants.undefined_on_cpu(case.op, name) or _too_slow_on_cpu(case.op, at.dtype, name):
                    continue  # an edge whose CPU result is undefined, or values the CPU takes minutes on
                try:
                    changed = at.transforms.apply(name, variant, pick)
                except RuntimeError:  # a dtype the transform cannot make (float8 has no CPU multiply)
                    changed = None
                if changed is not None:
                    variant, applied = changed, applied + [name]
            if "expanded" in applied and _writes_into_overlap(case, at.run, variant):
                reject()  # no valid input: the op writes into a stride-0 argument (running statistics, out=)
            drawn[0] += 1
            try:
                with case.atol_scaled(atol_scale(applied)):
                    placed = _judge(case, at, index, applied, variant, placement if devices >= 2 or placement in (
                        "device", "cpu_operand") else "device", pick)
            except Verdict as verdict:
                verdict.evidence.update(chain=at.chain(applied, verdict.evidence.get("placement", "device")),
                                        sample_index=index)
                raise
        counts["dtypes"][dtype_name(at.dtype)] += 1
        counts["directions"]["backward" if at.backward else "forward"] += 1
        return applied + ([placed] if placed != "device" else [])

    @seed(case.ctx.seed * 1_000_003 + zlib.crc32(runs.subject_of(case.op).encode()))
    @settings(max_examples=Settings.max_examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
    # The dtype and direction drawn first, forward first (False): shrinking simplifies the earliest
    # draws first, so it prefers the case's own dtype, forward, to a simpler chain elsewhere.
    @given(dtype=dtypes, backward=st.booleans(),
           index=st.integers(0, len(own.samples) - 1),
           chain=st.lists(st.sampled_from(Transforms.NAMES), max_size=CHAIN),
           placement=st.sampled_from(PLACEMENTS), pick=st.integers(0, PICKS - 1))
    def example(dtype: torch.dtype, backward: bool, index: int, chain: list[str], placement: str, pick: int) -> None:
        if time.monotonic() - started > Settings.seconds_per_op and not failure:
            budget["exhausted"] = True
            return
        at = setting(dtype, backward)
        if at is None:
            reject()
        try:
            names = attempt(at, index, chain, placement, pick)
        except Verdict as verdict:
            known = None if at.own else at.known_failure(case)
            if known is not None and _fails_as(known, verdict):
                counts["known_failures_matched"][at.name] += 1  # the ops check's failure there, again
                return
            if known is not None:
                verdict.evidence["known_failure"] = {"setting": at.name, **known}
            failure.update(chain=verdict.evidence["chain"], sample_index=verdict.evidence["sample_index"])
            raise
        counts["transforms"].update(names)

    try:
        example()
    except Verdict:
        _record(case, drawn[0], counts, without_samples, budget["exhausted"])
        raise
    except Flaky as flaky:  # the shrunk example passed when replayed: one side is not deterministic
        _record(case, drawn[0], counts, without_samples, budget["exhausted"])
        raise Verdict(Outcome.ERROR, {"message": f"the failing example did not fail again when replayed (a result "
                                                 f"that is not reproducible on one side): {str(flaky)[:1500]}",
                                      "exception_type": type(flaky).__name__, "chain": failure.get("chain", []),
                                      "sample_index": failure.get("sample_index"),
                                      "first_call": _first_call(flaky)}) from None
    _record(case, drawn[0], counts, without_samples, budget["exhausted"])
    case.compared = drawn[0]


def _first_call(flaky: Exception) -> dict[str, Any] | None:
    """What the example showed when it failed (Hypothesis keeps that failure in the group it raises
    when a replay passes): the outcome and evidence that nobody could see again."""
    for failed in getattr(flaky, "exceptions", ()):
        if isinstance(failed, Verdict):
            return {"outcome": failed.outcome, **runs.recordable(failed.evidence)}
    return None


def _judge(case: runs.Case, at: Setting, index: int, applied: list[str], variant, placement: str, pick: int) -> str:
    """Runs the example placed as `placement` and judges it. Returns the placement it had (the
    main device where the placement cannot be made: no operand to move, a sample the CPU refuses)."""
    label = lambda p: "+".join(at.chain(applied, p)) or "sample"  # noqa: E731
    run = at.run
    try:
        if placement == "other_device":
            with torch.accelerator.device_index(0):  # device 0 current, the inputs on device 1
                case.alike(run, index, label(placement), variant,
                           device=placements.indexed(case.ctx.device, 1))
            return placement
        if placement in ("cpu_operand", "other_device_operand") and _mixed(case, run, index, variant, placement,
                                                                           pick, label(placement)):
            return placement
    except Verdict as verdict:
        verdict.evidence["placement"] = placement
        raise
    case.alike(run, index, label("device"), variant)
    return "device"


def _mixed(case: runs.Case, run, index: int, variant, placement: str, pick: int, label: str) -> bool:
    """One operand of the example on the CPU or on device 1, the rest on device 0: refused, or (where
    PyTorch defines the mix) taken with the CPU's result. False where no such variant exists."""
    try:
        expected = case.cpu(run, variant)
    except NoReference:
        return False  # the CPU refuses the example itself: judged on the main device
    elsewhere = None if placement == "cpu_operand" else placements.indexed(case.ctx.device, 1)
    on_main = runs.on_device(variant, placements.indexed(case.ctx.device, 0), case.op)
    mixes = list(placements.mixed(variant, on_main, elsewhere))
    if not mixes:
        return False
    position, mixed, operand = mixes[pick % len(mixes)]
    placements.mixed_call(case, run, mixed, expected, placements.may_take(case.op, variant, operand),
                          {"variant": label, "sample_index": index, "sample": variant, "operand": position,
                           "operand_device": elsewhere or "cpu"})
    return True


def _writes_into_overlap(case: runs.Case, run, variant) -> bool:
    """Whether the CPU's run of the variant writes into one of its stride-0 arguments (which the
    CPU does not refuse and the device may rightly refuse): not a valid input."""
    try:
        _, ran = case.cpu(lambda s: (run(s), s), variant)
    except Exception:
        return False  # the CPU refuses it: Case.alike judges that
    return layouts.writes_into_overlap(variant, ran)


def _record(case: runs.Case, examples_run: int, counts: dict[str, Counter[str]], without_samples: list[str],
            exhausted: bool) -> None:
    fuzz = {"seed": case.ctx.seed, "examples_run": examples_run, "max_examples": Settings.max_examples,
            "seconds_per_op": Settings.seconds_per_op, "budget_exhausted": exhausted,
            **{f"{what}_drawn": dict(sorted(counts[what].items())) for what in ("transforms", "dtypes", "directions")}}
    if counts["known_failures_matched"]:
        fuzz["known_failures_matched"] = dict(sorted(counts["known_failures_matched"].items()))
    if without_samples:
        fuzz["without_samples"] = sorted(without_samples)
    case.evidence["fuzz"] = fuzz


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    for subject, op in sorted(infos().items()):
        if not op.supported_dtypes("cpu"):
            continue  # no CPU kernel: no reference
        dtype = sample_variants.representative_dtype(op)
        for check in SUITE.checks_for(op, dtype):
            yield subject, dtype_name(dtype), check


@SUITE.runs
def run_case(case_id: suite_api.CaseId, ctx) -> tuple[str, dict[str, Any]]:
    return runs.run_case(SUITE, case_id, ctx, infos())
