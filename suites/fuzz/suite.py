"""The fuzz suite: a differential fuzzer over every OpInfo. From the op's own samples, Hypothesis
draws compositions of the input axes (TRANSFORMS: the layout kinds, values scaled across the
dtype's range, a zero-size dimension, 0-dim scalars), runs each on the device against the CPU
with the ops suite's judge (Case.alike: the CPU decides validity; where it raises, the device
must raise the same type; where it returns, the results must match), and on a failure shrinks
it to the shortest chain of transforms on the earliest sample that still fails.

Case ids: fuzz/<OpInfo>/<dtype>/examples, one dtype per OpInfo (float32, else its first).
Options: `max_examples` (default 25) examples per case; `seconds_per_op` (default 3) stops drawing
new examples once a case has run that long (`budget_exhausted` in the evidence: the search was
cut short). Deterministic under `--seed`: the search is seeded with it (and the case id), keeps
no example database, and `repro CASE_ID` reruns the same search to the same example (unless the
time budget cut it at another point).
Evidence: `fuzz` (seed, examples run, how often each transform was drawn, whether the budget cut
the search short); a failure adds `chain` (the shrunk transforms, in order), `sample_index` and
the failing sample's shapes and strides (`sample`), and the judge's message names the first
differing element.
"""

from __future__ import annotations

import time
import zlib
from typing import Any, Iterable

import torch

import suite_api
from evidence import dtype_name
from sides import Verdict
from vocabulary import Outcome

from suitelib import opinfo
from suitelib.opinfo import layouts, runs, sample_variants

SAMPLES = 8  # of the op's samples, the first (Hypothesis draws one; shrinking prefers the earliest)
CHAIN = 3  # transforms composed at most

SUITE = suite_api.Suite(
    __name__, noun="OpInfo", nouns="OpInfos", native_phrase="run natively on every fuzzed input",
    options={"max_examples": {"type": "int", "default": 25, "help": "examples drawn per case"},
             "seconds_per_op": {"type": "float", "default": 3.0,
                                "help": "a case draws no new example after running this long (the nightly's budget)"}})


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


def _scaled(power: int):
    """Every floating-point tensor times 2**power: exact, magnitudes across the dtype's range."""
    def transform(sample):
        changed = []

        def scale(t: Any) -> Any:
            if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
                changed.append(True)
                with torch.no_grad():
                    return (t.detach() * 2.0 ** power).requires_grad_(t.requires_grad)
            return t
        variant = sample.transform(scale)
        return variant if changed else None
    return transform


def _first(variants: Iterable[tuple[str, Any]]):
    return next((v for _, v in variants), None)


# name -> sample -> variant (None: the transform changes nothing of this sample). Simplest first:
# Hypothesis shrinks towards the start of the list.
TRANSFORMS = {
    "noncontiguous": lambda s: layouts.laid_out(s, "noncontiguous"),
    "permuted": lambda s: layouts.laid_out(s, "permuted"),
    "offset": lambda s: layouts.laid_out(s, "offset"),
    "expanded": lambda s: layouts.laid_out(s, "expanded"),
    "channels_last": lambda s: layouts.laid_out(s, "channels_last"),
    "zero_size": lambda s: _first(sample_variants.zero_size(s)),
    "zero_dim": lambda s: _first(sample_variants.zero_dim(s)),
    **{f"scaled_2^{p}": _scaled(p) for p in (8, -8, 24, -24)},
}


@suite_api.check("examples", "Hypothesis-drawn compositions of layouts, value scales and edge shapes over the op's "
                 "samples, device against CPU, shrunk to the shortest failing chain")
def examples(case: runs.Case) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed, settings, strategies as st
    from hypothesis.errors import Flaky

    samples = runs.samples(case.op, case.dtype, reference=False)[:SAMPLES]
    if not samples:
        case.vacuous = "the OpInfo has no sample at this dtype"
        return
    run = lambda s: case.op(s.input, *s.args, **s.kwargs)  # noqa: E731
    started, drawn, counts = time.monotonic(), [0], {}
    failure: dict[str, Any] = {}
    budget = {"exhausted": False}

    @seed(case.ctx.seed * 1_000_003 + zlib.crc32(runs.subject_of(case.op).encode()))
    @settings(max_examples=Settings.max_examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
    @given(index=st.integers(0, len(samples) - 1), chain=st.lists(st.sampled_from(list(TRANSFORMS)), max_size=CHAIN))
    def example(index: int, chain: list[str]) -> None:
        if time.monotonic() - started > Settings.seconds_per_op and not failure:
            budget["exhausted"] = True
            return
        variant, applied = samples[index], []
        for name in chain:
            if sample_variants.undefined_on_cpu(case.op, name):  # an edge whose CPU result is undefined
                continue
            try:
                made = TRANSFORMS[name](variant)
            except RuntimeError:  # a dtype the transform cannot make (float8 has no CPU multiply)
                made = None
            if made is not None:
                variant, applied = made, applied + [name]
        if "expanded" in applied and _writes_into_overlap(case, run, variant):
            reject()  # no valid input: the op writes into a stride-0 argument (running statistics)
        drawn[0] += 1
        for name in applied:
            counts[name] = counts.get(name, 0) + 1
        try:
            case.alike(run, index, "+".join(applied) or "sample", variant)
        except Verdict:
            failure.update(chain=applied, sample_index=index)
            raise

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
    for subject, op in sorted(opinfo.by_subject().items()):
        if not op.supported_dtypes("cpu"):
            continue  # no CPU kernel: no reference
        dtype = sample_variants.representative_dtype(op)
        for check in SUITE.checks_for(op, dtype):
            yield subject, dtype_name(dtype), check


@SUITE.runs
def run_case(case_id: suite_api.CaseId, ctx) -> tuple[str, dict[str, Any]]:
    return runs.run_case(SUITE, case_id, ctx, runs.OPS)
