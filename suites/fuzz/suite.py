"""The fuzz suite: a differential fuzzer over every OpInfo (op_db and upstream's _foreach_* OpInfos).
From the op's own samples, Hypothesis draws compositions of the input axes (transforms.py: the
layout kinds, on every operand or one alone, values scaled across the dtype's range or shifted by
a large common offset, integers at iinfo's ends, negative dims, a zero-size dimension, 0-dim
scalars, one tensor in two places, each index twice, out= one of the inputs, an argument no sample
moves off its default, lists of 33 or 130 tensors), a form (FORMS: the function, its in-place
variant, out=), a placement (PLACEMENTS: the main device; the second device while the first is
current; one operand left on the CPU or on another device index), a dtype (any the OpInfo supports
on the CPU, the samples generated at it) and a direction (forward, or backward: the gradients of
every differentiable input, as the ops suite's backward check computes them, where the OpInfo
supports autograd at the dtype). A sweep runs each axis alone first (_sweep). It runs each example
on the device against the CPU with the ops suite's judge (Case.alike: the CPU decides validity;
where it raises, the device must raise the same type; where it returns, the results and every
argument the call changed must match within the drawn dtype's tolerance; operands on two devices
must be refused as CUDA refuses them), and on a failure shrinks it to the shortest chain on the
earliest sample that still fails, at the case's own dtype, forward, as a function where they still
fail.

Case ids: fuzz/<OpInfo>/<dtype>/examples, one dtype per OpInfo (float32, else its first): the
case's own dtype, drawn half the time and first. At another dtype, or backward, or in another
form, where the OpInfo fails the ops suite's forward or backward check at that dtype (another
form: that form on the plain samples), that failure is known: it is its
own case's to report (ops/<OpInfo>/<dtype>/<check>, which skip lists name), not this one's, whose
id names another dtype. An example there is still run and judged against it: failing as the ops
check fails (its outcome, and its first failing op or exception type) is the known failure
(`known_failures_matched` counts them); failing otherwise is a new failure behind the known one,
reported here with the ops check's failure as `known_failure`.
Options: `max_examples` (default 25) examples per case; `seconds_per_op` (default 3) stops drawing
new examples once a case has run that long, the backend's compile time not counted
(`budget_exhausted` in the evidence: the search was cut short). Deterministic under `--seed`:
the search is seeded with it (and the case id), draws dtypes from a fixed order (the case's own,
then the others by name), keeps no example database, and `repro CASE_ID` reruns the same search
to the same example (unless the time budget cut it at another point).
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
from compile_progress import spent
from evidence import dtype_name
from sides import NoReference, Verdict
from vocabulary import Outcome, Where

from suitelib import opinfo
from suitelib.opinfo import calls, checks, judge, layouts, placements, sample_variants, samples

from .transforms import FORMS, INTEGERS, Transforms, atol_scale, too_slow_on_cpu, with_out

SAMPLES = 8  # of the op's samples, the first (Hypothesis draws one; shrinking prefers the earliest)
CHAIN = 3  # transforms composed at most
PICKS = 8  # which operand, argument value or tensor pair a transform or placement takes, modulo their number


@cache
def infos() -> dict[str, Any]:
    return {**opinfo.by_subject(), **opinfo.foreach_by_subject()}


infos()  # op_db imported with the suite: the zygote forks its workers with it

SUITE = suite_api.Suite(
    __name__, noun="OpInfo", nouns="OpInfos", native_phrase="run natively on every fuzzed input",
    options={"max_examples": {"type": "int", "default": 25, "help": "examples drawn per case"},
             "seconds_per_op": {"type": "float", "default": 3.0,
                                "help": "a case draws no new example after running this long, compile time not "
                                        "counted (the nightly's budget)"}},
    # the nightly's budget: 200 examples an OpInfo, at most 10 s each
    nightly={"options": {"max_examples": 200, "seconds_per_op": 10.0}})
SUITE.makes_cases(judge.cases(infos))


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


# Where the example's tensors live. The main device first: Hypothesis shrinks towards it.
PLACEMENTS = ("device", "other_device", "cpu_operand", "other_device_operand")


class Setting:
    """What an example runs at besides its sample, chain and placement: one of the OpInfo's CPU
    dtypes and a direction, forward or backward (the gradients of every differentiable input, as
    the ops suite's backward check computes them). Its samples, runs and transforms are made the
    first time an example draws it. Forward, the op is called in one of FORMS: as a function,
    in place (its in-place variant), or with an out= full of values that must not matter."""

    def __init__(self, case: judge.Case, dtype: torch.dtype, backward: bool) -> None:
        op = case.op
        self.dtype, self.backward = dtype, backward
        self.samples = (samples.differentiable(op, dtype, reference=False, limit=SAMPLES) if backward
                        else samples.generated(op, dtype, reference=False, limit=SAMPLES))
        result: Callable[[Any], Any] = ((lambda s: calls.backward(op, s, weighted=True)) if backward
                                        else (lambda s: op(s.input, *s.args, **s.kwargs)))
        # judged: the result and the arguments it left (out= and an in-place self among them)
        self.runs = {"functional": calls.observed(result)}
        if not backward and op.supports_out:  # the same call: with_out() puts the out= in the sample
            self.runs["out"] = self.runs["functional"]
        if not backward and op.inplace_variant is not None:
            self.runs["inplace"] = calls.observed(lambda s: op.inplace_variant(s.input, *s.args, **s.kwargs))
        self.transforms = Transforms(case, dtype, self.samples, result)  # aliasing: the results alone
        self.named_dtype = [dtype_name(dtype)] if dtype != case.dtype else []  # in the chain
        # The case's own setting (its dtype, forward, the function) reports every failure; another
        # only where the OpInfo passes the ops suite's check there (the module's docstring).
        self.own = dtype == case.dtype and not backward
        self._known: dict[str, dict[str, Any] | None] = {}

    def form(self, drawn: str) -> str:
        """The form an example drawing `drawn` takes: that one where the setting has it (an
        in-place variant, an out=; forward only), else the function."""
        return drawn if drawn in self.runs else "functional"

    def name(self, form: str) -> str:
        """The setting as evidence names it: `float64/backward`, `int64/inplace`."""
        return f"{dtype_name(self.dtype)}/{form if form != 'functional' else 'backward' if self.backward else 'forward'}"

    def chain(self, applied: list[str], placement: str) -> list[str]:
        """The example as its evidence names it, in order: the dtype unless it is the case's, the
        form unless the function, the transforms applied, the placement unless it is the main
        device, `backward` for gradients."""
        return self.named_dtype + applied + ([placement] if placement != "device" else []) + \
            (["backward"] if self.backward else [])

    def known_failure(self, case: judge.Case, form: str) -> dict[str, Any] | None:
        """How the OpInfo fails at this setting in `form` on plain samples (its outcome, exception
        type, first failing op and message, as a skip-list entry records it): the function, the ops
        suite's forward or backward check at this dtype; another form, that form on the setting's
        samples as they are, on the main device (what the ops suite's `inplace` and `out` checks
        run first). Run once, on a Case of its own; None where it passes (or cannot have its values
        compared). A check the harness itself cannot run says nothing: None."""
        if form not in self._known:
            probe = judge.Case(case.op, self.dtype, case.ctx)
            try:
                if form == "functional":
                    (checks.check_backward if self.backward else checks.check_forward)(probe)
                else:
                    self._plain(probe, form)
                outcome, evidence = probe.conclude()
            except Verdict as verdict:
                outcome, evidence = verdict.outcome, verdict.evidence
            except Exception:  # noqa: BLE001 - the ops suite's own run would record it as the harness's error
                outcome, evidence = Outcome.PASS, {}
            # a failure of the harness or the CPU reference (no sample had a reference) is not the
            # device's: nothing is known to fail there
            self._known[form] = None
            if outcome not in (Outcome.PASS, Outcome.UNVERIFIED) and evidence.get("where") != Where.HARNESS:
                self._known[form] = {"outcome": outcome, "exception_type": evidence.get("exception_type"),
                                     "failing_op": evidence.get("failing_op"),
                                     "message": str(evidence.get("message", "")).split("\n")[0][:300]}
        return self._known[form]

    def _plain(self, probe: judge.Case, form: str) -> None:
        for index, sample in enumerate(self.samples):
            variant = with_out(probe, sample) if form == "out" else sample
            if variant is not None:
                probe.alike(self.runs[form], index, form, variant)
                probe.compared += 1


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


@suite_api.check("examples", "Hypothesis-drawn compositions of dtypes, gradients, call forms (in place, out=), "
                 "layouts per operand, value scales and offsets, integer extremes, edge shapes, negative dims, "
                 "argument identity and values, duplicate indices, list lengths and device placements over the "
                 "op's samples, after a sweep of each alone, device against CPU, shrunk to the shortest failing "
                 "chain")
def examples(case: judge.Case) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, example as explicit, given, reject, seed, settings
    from hypothesis import strategies as st
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
        key = (dtype, backward and calls.has_backward(case.op, dtype))
        if key not in made:
            try:
                made[key] = Setting(case, *key)
            except Exception:  # upstream's generator refuses the dtype, or samples requiring grad
                made[key] = None
            if made[key] is None or not made[key].samples:
                made[key] = None
                without_samples.append(f"{dtype_name(key[0])}/{'backward' if key[1] else 'forward'}")
        return made[key]

    # The case's own dtype half the time, and first (Hypothesis shrinks towards it): the other axes
    # keep half their examples at the dtype the case names. Else one of the others, in a fixed
    # order (by name), so that the same seed draws the same examples.
    others = sorted((d for d in case.op.supported_dtypes("cpu") if d != case.dtype), key=dtype_name)
    dtypes = st.one_of(st.just(case.dtype), st.sampled_from(others)) if others else st.just(case.dtype)
    devices = placements.device_count(case.ctx.device)

    def run_clock() -> float:
        # The budget is run time: on a device that compiles each new signature for seconds, compile
        # time counted against it would cut the search after a handful of new shapes.
        return time.monotonic() - spent(case.ctx.compile_cache())

    started, drawn = run_clock(), [0]
    counts: dict[str, Counter[str]] = {"transforms": Counter(), "dtypes": Counter(), "directions": Counter()}
    counts["known_failures_matched"] = Counter()
    failure: dict[str, Any] = {}
    budget = {"exhausted": False}

    def attempt(at: Setting, form: str, index: int, chain: list[tuple[str, int]], placement: str,
                pick: int) -> list[str]:
        """Runs the example at the setting in `form`: the names it applied (the form unless the
        function, the placement unless the main device), or a Verdict whose evidence names its
        `chain`."""
        index %= len(at.samples)  # another dtype's generator may make fewer samples
        with case.at_dtype(at.dtype):
            variant, applied = at.samples[index], []
            if form == "out":  # first: the transforms lay out the out= as any operand
                variant = None if sample_variants.undefined_on_cpu(case.op, form) else with_out(case, variant)
                form, variant = ("out", variant) if variant is not None else ("functional", at.samples[index])
            if form != "functional":
                applied.append(form)
            for name, chosen in chain:
                if sample_variants.undefined_on_cpu(case.op, name) or too_slow_on_cpu(case.op, at.dtype, name):
                    continue  # an edge whose CPU result is undefined, or values the CPU takes minutes on
                try:
                    changed = at.transforms.apply(name, variant, chosen)
                except RuntimeError:  # a dtype the transform cannot make (float8 has no CPU multiply)
                    changed = None
                if changed is not None:
                    variant, applied = changed[0], applied + [changed[1]]
            if any(name.startswith("expanded") for name in applied) and _writes_into_overlap(
                    case, at.runs[form], variant):
                reject()  # no valid input: the op writes into a stride-0 argument (running statistics, out=)
            drawn[0] += 1
            try:
                with case.atol_scaled(atol_scale(applied)):
                    placed = _judge(case, at, index, applied, variant, placement if devices >= 2 or placement in (
                        "device", "cpu_operand") else "device", pick, form)
            except Verdict as verdict:
                # out= one of the inputs is the out form too: its known failure is that form's
                called = "out" if "out" in variant.kwargs and form == "functional" else form
                verdict.evidence.update(chain=at.chain(applied, verdict.evidence.get("placement", "device")),
                                        sample_index=index, form=called)
                raise
        counts["dtypes"][dtype_name(at.dtype)] += 1
        counts["directions"]["backward" if at.backward else "forward"] += 1
        return applied + ([placed] if placed != "device" else [])

    # The dtype, direction and form drawn first, forward (False) and the function first: shrinking
    # simplifies the earliest draws first, so it prefers the case's own dtype, forward, as a
    # function, to a simpler chain elsewhere. The function and the main device half the time
    # each (the other forms and placements share the rest), as the case's own dtype is.
    @given(dtype=dtypes, backward=st.booleans(),
           form=st.one_of(st.just(FORMS[0]), st.sampled_from(FORMS[1:])),
           index=st.integers(0, len(own.samples) - 1),
           chain=st.lists(st.tuples(st.sampled_from(Transforms.NAMES), st.integers(0, PICKS - 1)), max_size=CHAIN),
           placement=st.one_of(st.just(PLACEMENTS[0]), st.sampled_from(PLACEMENTS[1:])),
           pick=st.integers(0, PICKS - 1))
    def example(dtype: torch.dtype, backward: bool, form: str, index: int, chain: list[tuple[str, int]],
                placement: str, pick: int) -> None:
        if run_clock() - started > Settings.seconds_per_op and not failure and drawn[0]:
            budget["exhausted"] = True
            return
        at = setting(dtype, backward)
        if at is None:
            reject()
        drawn_form, form = form, at.form(form)
        try:
            names = attempt(at, form, index, chain, placement, pick)
        except Verdict as verdict:
            form = verdict.evidence["form"]
            known = None if at.own and form == FORMS[0] else at.known_failure(case, form)
            if known is not None and _fails_as(known, verdict):
                counts["known_failures_matched"][at.name(form)] += 1  # the plain form's failure there, again
                return
            if known is not None:
                verdict.evidence["known_failure"] = {"setting": at.name(form), **known}
            failure.update(chain=verdict.evidence["chain"], sample_index=verdict.evidence["sample_index"])
            if verdict.evidence["chain"] and not str(verdict.evidence.get("message", "")).startswith("["):
                # the example in the message's first words, where summaries and skip lists read it
                verdict.evidence["message"] = f"[{'+'.join(verdict.evidence['chain'])}] {verdict.evidence.get('message', '')}"
            if not failure.get("replayed"):  # the first failure, replayed at once: a sweep example is not shrunk
                failure["replayed"] = True
                try:
                    attempt(at, at.form(drawn_form), index, chain, placement, pick)
                except Verdict:
                    pass
                else:
                    raise _NotReproducible(verdict) from None
            raise
        counts["transforms"].update(name.split(":")[0] for name in names)

    search = example
    for swept in reversed(_sweep(case, own)):  # run first, in order
        search = explicit(**swept)(search)
    search = seed(case.ctx.seed * 1_000_003 + zlib.crc32(opinfo.subject(case.op).encode()))(settings(
        max_examples=Settings.max_examples, deadline=None, database=None, derandomize=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)(search))
    try:
        search()
    except Verdict:
        _record(case, drawn[0], counts, without_samples, budget["exhausted"])
        raise
    except (Flaky, _NotReproducible) as flaky:  # a failing example passed when replayed: one side is not deterministic
        _record(case, drawn[0], counts, without_samples, budget["exhausted"])
        raise Verdict(Outcome.ERROR, {"message": f"the failing example did not fail again when replayed (a result "
                                                 f"that is not reproducible on one side): {str(flaky)[:1500]}",
                                      "exception_type": type(flaky).__name__, "chain": failure.get("chain", []),
                                      "sample_index": failure.get("sample_index"),
                                      "first_call": _first_call(flaky)}) from None
    _record(case, drawn[0], counts, without_samples, budget["exhausted"])
    case.compared = drawn[0]


def _sweep(case: judge.Case, own: Setting) -> list[dict[str, Any]]:
    """The examples a case runs before its search, one axis at a time at its own setting (its
    dtype, forward, as a function, on the main device): each transform on the first sample it
    changes (each layout kind also on one operand alone, the first and the second), each other
    form plain, with its operands non-contiguous and permuted, and with the first operand
    expanded (an in-place self whose elements share memory), and integer extremes at each
    integer dtype the OpInfo supports. Hypothesis draws its compositions from a distribution of its
    own, which may leave a transform undrawn in hundreds of examples; the sweep makes sure each
    is met once. A failing sweep example is reported as it is: it is one change already."""
    plain = {"dtype": case.dtype, "backward": False, "form": FORMS[0], "index": 0, "chain": [],
             "placement": PLACEMENTS[0], "pick": 0}
    swept = []
    for name in Transforms.NAMES:
        index = next((i for i, sample in enumerate(own.samples) if _changes(case, own, name, sample)), None)
        if index is not None:
            swept.append({**plain, "index": index, "chain": [(name, 0)]})
        if name in layouts.KINDS:  # one operand alone, where two the kind changes share a shape (or, else, differ)
            several = [i for i, sample in enumerate(own.samples) if layouts.changeable(sample, name) > 1]
            alike = [i for i in several if _shapes_shared(own.samples[i])]
            several = (alike or several or [None])[0]
            if several is not None:
                swept += [{**plain, "index": several, "chain": [(name, pick)]} for pick in (1, 2)]
    for form in FORMS[1:]:
        if form in own.runs:
            swept += [{**plain, "form": form, "chain": chain}
                      for chain in ([], [("noncontiguous", 0)], [("permuted", 0)], [("expanded", 1)])]
    # the extremes where the most elements take them (at the case's dtype, the sizes its samples have)
    largest = max(range(len(own.samples)), key=lambda i: max((t.numel() for t in samples.tensors(own.samples[i])),
                                                               default=0))
    integers = sorted((d for d in case.op.supported_dtypes("cpu") if d in INTEGERS), key=dtype_name)
    swept += [{**plain, "dtype": dtype, "index": largest, "chain": [("int_extremes", 0)]} for dtype in integers]
    return swept


def _shapes_shared(sample) -> bool:
    """Whether two of the sample's tensors have one shape (of more than one element): operands a
    kernel iterates together, each with its own strides."""
    shapes = [tuple(t.shape) for t in samples.tensors(sample) if t.numel() > 1]
    return len(set(shapes)) < len(shapes)


def _changes(case: judge.Case, at: Setting, name: str, sample) -> bool:
    """Whether the transform changes the sample at the setting (int_extremes: at its integer
    dtypes, which the sweep runs it at)."""
    if name == "int_extremes" or sample_variants.undefined_on_cpu(case.op, name):
        return False
    try:
        return at.transforms.apply(name, sample, 0) is not None
    except Exception:  # noqa: BLE001 - a transform the sample cannot take: the search may still draw it
        return False


class _NotReproducible(Exception):
    """A failing example that passed when it was run again at once: `exceptions` holds its failure."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.evidence.get("message", ""))
        self.exceptions = (verdict,)


def _first_call(flaky: Exception) -> dict[str, Any] | None:
    """What the example showed when it failed (Hypothesis keeps that failure in the group it raises
    when a replay passes): the outcome and evidence that nobody could see again."""
    for failed in getattr(flaky, "exceptions", ()):
        if isinstance(failed, Verdict):
            return {"outcome": failed.outcome, **judge.recordable(failed.evidence)}
    return None


def _judge(case: judge.Case, at: Setting, index: int, applied: list[str], variant, placement: str, pick: int,
           form: str = FORMS[0]) -> str:
    """Runs the example in `form` placed as `placement` and judges it. Returns the placement it had
    (the main device where the placement cannot be made: no operand to move, a sample the CPU
    refuses)."""
    label = lambda p: "+".join(at.chain(applied, p)) or "sample"  # noqa: E731
    run = at.runs[form]
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


def _mixed(case: judge.Case, run, index: int, variant, placement: str, pick: int, label: str) -> bool:
    """One operand of the example on the CPU or on device 1, the rest on device 0: refused, or (where
    PyTorch defines the mix) taken with the CPU's result. False where no such variant exists."""
    try:
        expected = case.cpu(run, variant)
    except NoReference:
        return False  # the CPU refuses the example itself: judged on the main device
    elsewhere = None if placement == "cpu_operand" else placements.indexed(case.ctx.device, 1)
    on_main = samples.on_device(variant, placements.indexed(case.ctx.device, 0), case.op)
    mixes = list(placements.mixed(variant, on_main, elsewhere))
    if not mixes:
        return False
    position, mixed, operand = mixes[pick % len(mixes)]
    placements.mixed_call(case, run, mixed, expected, placements.may_take(case.op, variant, operand),
                          {"variant": label, "sample_index": index, "sample": variant, "operand": position,
                           "operand_device": elsewhere or "cpu"})
    return True


def _writes_into_overlap(case: judge.Case, run, variant) -> bool:
    """Whether the CPU's run of the variant writes into one of its stride-0 arguments (which the
    CPU does not refuse and the device may rightly refuse): not a valid input."""
    try:
        _, ran = case.cpu(lambda s: (run(s), s), variant)
    except Exception:
        return False  # the CPU refuses it: Case.alike judges that
    return layouts.writes_into_overlap(variant, ran)


def _record(case: judge.Case, examples_run: int, counts: dict[str, Counter[str]], without_samples: list[str],
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

