"""The fuzz suite: a differential fuzzer over every OpInfo (op_db and upstream's _foreach_* OpInfos).
From the op's own samples, Hypothesis draws compositions of the input axes (TRANSFORMS: the layout
kinds, values scaled across the dtype's range or shifted by a large common offset, a zero-size
dimension, 0-dim scalars, one tensor in two places, out= one of the inputs, an argument no sample
moves off its default, lists of 33 or 130 tensors) and a placement (PLACEMENTS: the main device;
the second device while the first is current; one operand left on the CPU or on another device
index), runs each on the device against the CPU with the ops suite's judge (Case.alike: the CPU
decides validity; where it raises, the device must raise the same type; where it returns, the
results must match; operands on two devices must be refused as CUDA refuses them), and on a
failure shrinks it to the shortest chain on the earliest sample that still fails.

Case ids: fuzz/<OpInfo>/<dtype>/examples, one dtype per OpInfo (float32, else its first).
Options: `max_examples` (default 25) examples per case; `seconds_per_op` (default 3) stops drawing
new examples once a case has run that long (`budget_exhausted` in the evidence: the search was
cut short). Deterministic under `--seed`: the search is seeded with it (and the case id), keeps
no example database, and `repro CASE_ID` reruns the same search to the same example (unless the
time budget cut it at another point).
Evidence: `fuzz` (seed, examples run, how often each transform and placement was applied,
whether the budget cut the search short); a failure adds `chain` (the shrunk transforms and
placement, in order), `sample_index` and the failing sample's shapes and strides (`sample`), and
the judge's message names the first differing element.
"""

from __future__ import annotations

import time
import zlib
from functools import cache
from typing import Any, Callable, Iterable

import torch

import suite_api
from evidence import dtype_name
from sides import NoReference, Verdict
from vocabulary import Outcome

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


@suite_api.check("examples", "Hypothesis-drawn compositions of layouts, value scales and offsets, edge shapes, "
                 "argument identity and values, list lengths and device placements over the op's samples, device "
                 "against CPU, shrunk to the shortest failing chain")
def examples(case: runs.Case) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed, settings, strategies as st
    from hypothesis.errors import Flaky

    samples = runs.samples(case.op, case.dtype, reference=False)[:SAMPLES]
    if not samples:
        case.vacuous = "the OpInfo has no sample at this dtype"
        return
    run = lambda s: case.op(s.input, *s.args, **s.kwargs)  # noqa: E731
    transforms = Transforms(case, samples, run)
    devices = placements.device_count(case.ctx.device)
    started, drawn, counts = time.monotonic(), [0], {}
    failure: dict[str, Any] = {}
    budget = {"exhausted": False}

    @seed(case.ctx.seed * 1_000_003 + zlib.crc32(runs.subject_of(case.op).encode()))
    @settings(max_examples=Settings.max_examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
    @given(index=st.integers(0, len(samples) - 1), chain=st.lists(st.sampled_from(Transforms.NAMES), max_size=CHAIN),
           placement=st.sampled_from(PLACEMENTS), pick=st.integers(0, PICKS - 1))
    def example(index: int, chain: list[str], placement: str, pick: int) -> None:
        if time.monotonic() - started > Settings.seconds_per_op and not failure:
            budget["exhausted"] = True
            return
        variant, applied = samples[index], []
        for name in chain:
            if sample_variants.undefined_on_cpu(case.op, name):  # an edge whose CPU result is undefined
                continue
            try:
                made = transforms.apply(name, variant, pick)
            except RuntimeError:  # a dtype the transform cannot make (float8 has no CPU multiply)
                made = None
            if made is not None:
                variant, applied = made, applied + [name]
        if "expanded" in applied and _writes_into_overlap(case, run, variant):
            reject()  # no valid input: the op writes into a stride-0 argument (running statistics, out=)
        drawn[0] += 1
        try:
            placed = _judge(case, run, index, applied, variant, placement if devices >= 2 or placement in (
                "device", "cpu_operand") else "device", pick)
        except Verdict as verdict:
            placed = verdict.evidence.get("placement", "device")
            failure.update(chain=applied + ([placed] if placed != "device" else []), sample_index=index)
            raise
        for name in applied + ([placed] if placed != "device" else []):
            counts[name] = counts.get(name, 0) + 1

    try:
        example()
    except Verdict as verdict:
        verdict.evidence["chain"] = failure.get("chain", [])
        _record(case, drawn[0], counts, budget["exhausted"])
        raise
    except Flaky as flaky:  # the shrunk example passed when replayed: one side is not deterministic
        _record(case, drawn[0], counts, budget["exhausted"])
        raise Verdict(Outcome.ERROR, {"message": f"the failing example did not fail again when replayed (a result "
                                                 f"that is not reproducible on one side): {str(flaky)[:1500]}",
                                      "exception_type": type(flaky).__name__, "chain": failure.get("chain", []),
                                      "sample_index": failure.get("sample_index")}) from None
    _record(case, drawn[0], counts, budget["exhausted"])
    case.compared = drawn[0]


def _judge(case: runs.Case, run, index: int, applied: list[str], variant, placement: str, pick: int) -> str:
    """Runs the example placed as `placement` and judges it. Returns the placement it had (the
    main device where the placement cannot be made: no operand to move, a sample the CPU refuses)."""
    label = lambda p: "+".join(applied + ([p] if p != "device" else [])) or "sample"  # noqa: E731
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


def _record(case: runs.Case, examples_run: int, counts: dict[str, int], exhausted: bool) -> None:
    case.evidence["fuzz"] = {"seed": case.ctx.seed, "examples_run": examples_run, "max_examples": Settings.max_examples,
                             "seconds_per_op": Settings.seconds_per_op, "budget_exhausted": exhausted,
                             "transforms_drawn": dict(sorted(counts.items()))}


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
