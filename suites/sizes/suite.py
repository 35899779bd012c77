"""The sizes suite: the ops models spend their time in, at the sizes accelerator kernels tile by
(partitions of 128, free-dimension chunks of 512, and the sizes above them), and at the shapes of
real models' layers, on the device against a float64 reference computed on the CPU.

Case ids:
  sizes/<OpInfo>/<dtype>/tile<n>      n in 128, 512, 2048, 4096: each dimension the op's entry
                                      names (sizes_tiles.TABLE), one at a time, at n-1, n and n+1,
                                      the rest as the OpInfo's own sample has them, contiguous and
                                      transposed; tile8192: the contraction or reduction
                                      dimensions only, at 8191, 8192, 8193
  sizes/<model>.<part>/<dtype>/seq<s> s in 1, 128, 2048: the shapes of one part (embedding,
                                      attention, mlp, norm, lm_head) of a real model's layer
                                      (models.json, sizes_models), each op alone
at float32 and bfloat16, the dtypes the backend computes in.
Tolerance: sizes_judge (grows with the square root of the reduction length K; the formula, K and
the largest error over its bound are part of every result's evidence). Memory: no case
allocates more than the `max_case_memory` suite option (default 2 GiB; sizes_calls).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import torch
import torch.utils._pytree as pytree

from suitelib import opinfo
from evidence import describe_tensor, dtype_name, exception_evidence
from sides import Verdict
import suite_api
from vocabulary import Outcome, Where

from . import sizes_calls, sizes_models, sizes_tiles
from .sizes_judge import FORMULA, Wrong

DTYPES = (torch.float32, torch.bfloat16)
_UNITS = {"": 1, "b": 1, "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30}


class Settings:
    max_case_memory = 2 * 2**30


def parse_size(text: str) -> int:
    """'2GiB', '512MiB', '1.5g', '1048576' -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"max_case_memory={text!r}: expected a size such as 2GiB, 512MiB or a number of bytes")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(f"max_case_memory={text!r}: must be positive")
    return size


SUITE = suite_api.Suite(
    __name__, noun="op or model part", nouns="ops and model parts", native_phrase="run natively at every size",
    share_cores=True,  # many small ops per case: -j workers must not oversubscribe the cores
    options={"max_case_memory": {"type": "str", "default": "2GiB",
                                 "help": "the most a case may allocate (2GiB, 512MiB, bytes): larger calls are cut "
                                         "down or not run, and the evidence says which"}})


@SUITE.configures
def configure(options: dict[str, Any]) -> None:
    """`max_case_memory` (run --suite-option max_case_memory=SIZE): the most a case may allocate."""
    Settings.max_case_memory = parse_size(options["max_case_memory"])


opinfo.by_subject()  # op_db imported with the suite: the zygote forks its workers with it


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    for subject, entry in sorted(sizes_tiles.TABLE.items()):
        if subject not in opinfo.by_subject():
            continue  # an op this torch's op_db does not have
        supported = opinfo.by_subject()[subject].supported_dtypes("cpu")
        for dtype in (d for d in DTYPES if d in supported):
            yield from ((subject, dtype_name(dtype), check) for check in SUITE.checks_for(subject))
    yield from ((subject, dtype_name(dtype), check) for subject in sizes_models.subjects()
                for dtype in DTYPES for check in SUITE.checks_for(subject))


@SUITE.makes_cases
class SizesCase(suite_api.Case):
    """One case: the subject's calls (what its check makes), each run on the device and judged
    against the float64 reference under the memory bound (run_calls); the KeyError of
    suite_api.unknown() for a dtype or a subject and check the suite does not have."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        self.dtype = {dtype_name(d): d for d in DTYPES}.get(case_id.dtype)
        if self.dtype is None:
            raise suite_api.unknown(case_id, f"dtype {case_id.dtype}")
        if case_id.check not in SUITE.checks_for(case_id.subject):
            raise suite_api.unknown(case_id, f"subject {case_id.subject} with check {case_id.check}")
        super().__init__(case_id, ctx)
        self.evidence.update(reference_dtype="float64", tolerance_formula=FORMULA,
                             max_case_memory=Settings.max_case_memory)

    def run_calls(self, calls: list[sizes_calls.Call]) -> None:
        """Each call that fits the memory bound (cut down to fit, or not run: `reduced`, `not_run`),
        on the device against the reference; the largest errors and memory, and each call's
        measurements (`calls`), in the evidence. An `error` Verdict when the device raises or no
        call fits, a `fail` one when a result is beyond its bound."""
        evidence, dtype, ctx = self.evidence, self.dtype, self.ctx
        device_module = torch.get_device_module(ctx.device)
        measured: dict[str, dict[str, Any]] = {}
        worst = {"tolerance_ratio": 0.0, "cpu_formula_ratio": 0.0, "max_abs_error": 0.0, "max_rel_error": 0.0,
                 "peak_device_memory": 0, "estimated_memory": 0}
        for call in calls:
            runnable, need, note = sizes_calls.fit(call, dtype, Settings.max_case_memory)
            if note:
                evidence.setdefault("reduced" if runnable else "not_run", []).append(note)
            if runnable is None:
                continue
            worst["estimated_memory"] = max(worst["estimated_memory"], need)
            try:
                result = sizes_calls.run(runnable, dtype, ctx.device, int(ctx.seed), device_module)
            except sizes_calls.DeviceRaised as raised:
                where = {"variant": runnable.name, "shapes": _shapes(runnable, dtype)}
                raise Verdict(Outcome.ERROR, {**worst, **exception_evidence(raised.__cause__), **where,
                                              "calls": measured})
            except Wrong as wrong:
                where = {"variant": runnable.name, "shapes": _shapes(runnable, dtype)}
                raise Verdict(Outcome.FAIL, {**worst, **where, "calls": measured,
                                             "message": f"{runnable.name} {where['shapes']}: {wrong}",
                                             **{k: v for k, v in wrong.errors.items() if k in worst and v > worst[k]}})
            measured[runnable.name] = result
            for key in ("tolerance_ratio", "cpu_formula_ratio", "max_abs_error", "max_rel_error",
                        "peak_device_memory"):
                worst[key] = max(worst[key], result.get(key) or 0)
        evidence.update(worst, calls=measured)
        if not measured:
            raise Verdict(Outcome.ERROR, {
                "exception_type": "MemoryBound", "where": Where.HARNESS,
                "message": "no call of the case fits max_case_memory: " + "; ".join(evidence.get("not_run", []))})


def _tile_calls(subject: str, dtype: torch.dtype, tile: int, seed: int) -> list[sizes_calls.Call]:
    op, entry = opinfo.by_subject()[subject], sizes_tiles.TABLE[subject]
    sample = next((s for s in op.sample_inputs("cpu", dtype) if sizes_tiles.fits(entry, s)), None)
    if sample is None:
        raise LookupError(f"no sample input of {subject} at {dtype_name(dtype)} fits its entry in sizes_tiles.TABLE")
    calls = []
    for scaled in sizes_tiles.inputs(entry, sample, tile, dtype, seed):
        s = scaled.sample
        selection = None
        if entry.indices_dim is not None and not entry.stable_indices(s):
            selection = (0, entry.indices_dim(s))
        calls.append(sizes_calls.Call(
            scaled.name, lambda *a, _p=s.output_process_fn_grad, **kw: _p(op(*a, **kw)), [], k=scaled.reduction_length,
            given=((s.input, *s.args), dict(s.kwargs)), selection=selection,
            accumulates_in_dtype=entry.accumulates_in_dtype))
    return calls


def _is_tiled(subject: str) -> bool:
    return subject in sizes_tiles.TABLE


def tile(case: SizesCase) -> None:
    """The op's calls scaled to the check's tile (tile<n>)."""
    case.evidence["family"] = sizes_tiles.family(case.id.subject)
    tile_size = int(case.id.check.removeprefix("tile"))
    case.run_calls(_tile_calls(case.id.subject, case.dtype, tile_size, int(case.ctx.seed)))


for _n in sizes_tiles.TILES:
    suite_api.check(f"tile{_n}", f"each dimension the op's entry names at {_n - 1}, {_n} and {_n + 1}, contiguous and "
                                 f"transposed", applies=_is_tiled)(tile)
suite_api.check(f"tile{sizes_tiles.CONTRACTION_TILE}", "the contraction or reduction dimensions at 8191, 8192 and 8193",
                applies=lambda subject: _is_tiled(subject) and sizes_tiles.TABLE[subject].reduce)(tile)


def model_part(case: SizesCase) -> None:
    """The ops of one part of a model's layer at the check's sequence length (seq<s>)."""
    model, _, part = case.id.subject.rpartition(".")
    case.evidence.update(family=f"model.{part}", architecture=sizes_models.models()[model].architecture)
    case.run_calls(sizes_models.calls(model, part, sizes_models.SEQUENCES[case.id.check]))


def _is_model_part(subject: str) -> bool:
    return subject.rpartition(".")[0] in sizes_models.models()


for _check, _seq in sizes_models.SEQUENCES.items():
    suite_api.check(_check, f"one part of a real model's layer at sequence length {_seq}, op by op",
                    applies=_is_model_part)(model_part)


def _shapes(call: sizes_calls.Call, dtype: torch.dtype) -> str:
    """The call's tensor arguments (evidence.describe_tensor), for a failure's evidence."""
    args, _ = call.make(dtype, "meta", None)
    return ", ".join(describe_tensor(t) for t in pytree.tree_leaves(args) if isinstance(t, torch.Tensor))
