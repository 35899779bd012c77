"""The aten suite: aten overloads with a CPU kernel that no OpInfo reaches at the device, called
directly, device against CPU (docs/ledger.md).

The ops suite calls OpInfos; many overloads never receive a call from them at the device:
in-place and `.out` forms of a reached functional op, `Scalar` overloads, the `.grad_input` forms
of backward kernels. This suite takes its inputs from the ops suite's own OpInfo samples: an
OpInfo's samples run on the CPU (forward, then backward) under a dispatch mode that records every
aten call (`capture()`), so a backward kernel's inputs are those the CPU's own forward produced.
Each case takes one recorded call of a *donor* overload of the target's family and turns it into
a call of the target, by its schema:

  - `out`: the target writes `out=` tensors (`.out`, `.grad_input`, `.output`, `*_out`): the
    donor's arguments, and empty `out=` tensors of the donor's result dtypes;
  - `inplace`: the target mutates `self` (`foo_`): the donor's arguments, `self` a copy;
  - `scalar`: the target takes a `Scalar` where the donor has a tensor: that tensor's first
    element, as a Python number;
  - `direct`: the donor is the target itself (called on the CPU by an OpInfo, but never at the
    device, whose dispatch takes another path).

The call runs on the CPU and on the device (torch.ops.aten.<name>.<overload>), and the results and
every written argument are compared (comparison.py, the OpInfo's tolerance). `donors.json` names,
per target, the OpInfo, dtype and donor overload; `python suites/aten/make_donors.py`
wrote it from the ledger's unreached overloads (see README.md). Case ids
`aten/<overload without aten::>/<dtype>/<check>`.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

import suite_api
from comparison import Mismatch, compare, to_device
from evidence import dtype_name
from sides import NoReference, Verdict
from vocabulary import Outcome, Where

from suitelib import opinfo, reviewed
from suitelib.opinfo import calls, judge, samples

from . import explicit

opinfo.by_subject()  # op_db imported with the suite: the zygote forks its workers with it

HERE = Path(__file__).resolve().parent
DONORS_FILE = HERE / "donors.json"
SUITE = suite_api.Suite(__name__, noun="overload", nouns="aten overloads", native_phrase="run natively")
# A check is the form of the overload the case calls; one runner serves every form (run_overload).
FORMS = {
    "out": "the overload's out= form, fed with the donor's arguments; results and out= tensors against the CPU",
    "inplace": "the overload's in-place form on a copy of the donor's self; self and result against the CPU",
    "scalar": "the overload's Scalar form, a tensor argument of the donor given as a Python number",
    "direct": "the overload itself with the arguments an OpInfo's CPU run passed it",
}


def overload_name(func) -> str:
    """As the dispatcher and op_events spell it: aten::add.Tensor, aten::sgn."""
    schema = func._schema
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def resolve(name: str):
    """aten::add.Tensor -> torch.ops.aten.add.Tensor."""
    base, _, overload = name.removeprefix("aten::").partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


class Capture(TorchDispatchMode):
    """Records the first call of each aten overload (its arguments, copied) while running."""

    def __init__(self, wanted: set[str] | None = None) -> None:
        super().__init__()
        self.wanted = wanted
        self.calls: dict[str, tuple[tuple, dict]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = overload_name(func)
        if name not in self.calls and (self.wanted is None or name in self.wanted):
            self.calls[name] = pytree.tree_map_only(torch.Tensor, lambda t: t.detach().clone(), (args, kwargs))
        return func(*args, **kwargs)


def capture(op, dtype: torch.dtype, wanted: set[str] | None = None, limit: int = 8) -> dict[str, tuple[tuple, dict]]:
    """The aten calls the OpInfo's first `limit` samples make on the CPU, forward then backward
    (calls.forward, and calls.backward of the outputs' sum where the op is differentiable)."""
    mode = Capture(wanted)
    for grad in (False, True):
        if grad and not (op.supports_autograd and (dtype.is_floating_point or dtype.is_complex)):
            continue
        try:
            inputs = samples.generated(op, dtype, reference=False, requires_grad=grad)[:limit]
        except Exception:
            continue
        for sample in inputs:
            try:
                with mode:
                    (calls.backward if grad else calls.forward)(op, sample)
            except Exception:
                continue
    return mode.calls


# --- turning a donor's call into the target's ------------------------------------------------

def _written(argument) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _source_names(t, d) -> dict[str, str]:
    """Target argument -> the donor's argument giving its value: the same name, else the donor's
    argument at the same position when the target has no argument of that name
    (isin.Scalar_Tensor's `element` from isin.Tensor_Tensor's `elements`)."""
    d_names = [a.name for a in d.arguments]
    t_names = {a.name for a in t.arguments}
    out = {}
    for i, a in enumerate(t.arguments):
        if a.name in d_names:
            out[a.name] = a.name
        elif i < len(d_names) and d_names[i] not in t_names and not a.kwarg_only:
            out[a.name] = d_names[i]
    return out


def check_of(target: str, donor: str) -> str | None:
    """Which check turns a call of `donor` into one of `target`, or None when none does."""
    if target == donor:
        return "direct"
    t, d = resolve(target)._schema, resolve(donor)._schema
    d_args = {a.name: a for a in d.arguments}
    source = _source_names(t, d)
    outs = [a for a in t.arguments if _written(a) and a.kwarg_only]
    inputs = [a for a in t.arguments if a not in outs]
    for a in inputs:
        if a.name not in source and not a.has_default_value():
            return None
    if outs:
        return "out"
    if any(_written(a) for a in t.arguments) and t.name.endswith("_"):
        return "inplace"
    if any(_is_scalar(a) and a.name in source and str(d_args[source[a.name]].type) == "Tensor"
           for a in inputs):
        return "scalar"
    return None


def _is_scalar(argument) -> bool:
    return str(argument.type) in ("Scalar", "number")  # a Scalar prints as "number"


def _as_scalar(value: Any) -> Any:
    return value.flatten()[0].item() if isinstance(value, torch.Tensor) else value


def build_call(target: str, donor: str, call: tuple[tuple, dict]) -> tuple[tuple, dict]:
    """The target's arguments, by name, from the donor's recorded call (CPU tensors, fresh)."""
    t, d = resolve(target)._schema, resolve(donor)._schema
    args, kwargs = call
    given: dict[str, Any] = {}
    for a, value in zip(d.arguments, args):
        given[a.name] = value
    given.update(kwargs)
    source = _source_names(t, d)
    donor_result = None
    positional, named = [], {}
    for a in t.arguments:
        if _written(a) and a.kwarg_only:  # an out= tensor: empty, of the donor's result dtype
            if donor_result is None:
                donor_result = pytree.tree_leaves(resolve(donor)(*pytree.tree_map_only(torch.Tensor, torch.clone, args),
                                                                 **pytree.tree_map_only(torch.Tensor, torch.clone, kwargs)))
                donor_result = [r for r in donor_result if isinstance(r, torch.Tensor)]
            index = sum(1 for b in t.arguments[: t.arguments.index(a)] if _written(b) and b.kwarg_only)
            like = donor_result[index] if index < len(donor_result) else donor_result[-1]
            named[a.name] = torch.empty(0, dtype=like.dtype)
            continue
        if a.name not in source or source[a.name] not in given:
            continue  # its default
        value = given[source[a.name]]
        if _is_scalar(a):
            value = _as_scalar(value)
        elif isinstance(value, torch.Tensor):
            value = value.clone()
        if a.kwarg_only:
            named[a.name] = value
        else:
            positional.append(value)
    return tuple(positional), named


# --- the suite contract -----------------------------------------------------------------------

@reviewed.document
@cache
def _donors() -> dict[str, dict[str, str]]:
    """donors.json's targets, each an overload with its OpInfo, a dtype torch has, the donor and a
    known form (whether the overloads exist is the installed torch's: list_cases() skips others')."""
    fields = dict.fromkeys(("opinfo", "dtype", "donor", "check"), str)

    def problem(target: str, donor: Any) -> str | None:
        if (wrong := reviewed.fields_problem(donor, fields)) is not None:
            return wrong
        if not target.startswith("aten::") or not donor["donor"].startswith("aten::"):
            return "the target and the donor are overloads named aten::<name>.<overload>"
        dtype = getattr(torch, donor["dtype"], None)
        if not isinstance(dtype, torch.dtype) or dtype_name(dtype) != donor["dtype"]:
            return f"'{donor['dtype']}' is no dtype as case ids name them (float32, int64, ...)"
        return None if donor["check"] in FORMS else f"unknown check '{donor['check']}' (known: {', '.join(FORMS)})"

    return reviewed.read(DONORS_FILE, {"description": str, "targets": reviewed.Field(dict, entries=problem)})["targets"]


def _installed(name: str) -> bool:
    try:
        resolve(name)
        return True
    except (AttributeError, RuntimeError):
        return False


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    donors = _donors()
    specs = {t: (d["check"], d["dtype"]) for t, d in donors.items() if _installed(d["donor"])}
    specs.update({t: (c.check, c.dtype) for t, c in explicit.CALLS.items() if t not in donors})
    for target, (check, dtype) in sorted(specs.items()):
        if not _installed(target):
            continue  # another torch: its overloads differ
        yield target.removeprefix("aten::"), dtype, check


@SUITE.makes_cases
class OverloadCase(judge.Case):
    """One case: the overload a case id names, its check the form it is called in, the OpInfo
    whose samples donated its arguments (or explicit.py's call written by hand), judged at that
    OpInfo's tolerance; the KeyError of suite_api.unknown() for an overload the suite does not list
    at this dtype and check."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        _, subject, dtype_str, check = case_id
        self.target = "aten::" + subject
        self.donated, self.written = _donors().get(self.target), explicit.CALLS.get(self.target)
        spec = (self.donated["check"], self.donated["dtype"], self.donated["opinfo"]) if self.donated else \
            (self.written.check, self.written.dtype, self.written.opinfo) if self.written else None
        if spec is None or (check, dtype_str) != spec[:2]:
            raise suite_api.unknown(case_id, "such overload at this dtype and check")
        super().__init__(opinfo.by_subject()[spec[2]], getattr(torch, dtype_str), ctx)
        self.check = check
        self.evidence["opinfo"] = spec[2]


def run_overload(case: OverloadCase) -> None:
    """The case's overload called with its donor's recorded arguments (or explicit.py's) on the CPU
    and on the device."""
    target, opinfo_name = case.target, case.evidence["opinfo"]
    if case.donated:
        donor = case.donated["donor"]
        case.evidence["donor"] = donor
        recorded = capture(case.op, case.dtype, {donor})
        if donor not in recorded:
            raise Verdict(Outcome.ERROR, {"where": Where.HARNESS,
                                          "message": f"the OpInfo {opinfo_name}'s samples no longer call {donor} on "
                                                     f"the CPU (regenerate donors.json)"})
        _judge(case, target, lambda: build_call(target, donor, recorded[donor]), True,
               f"{case.check} from {donor} ({opinfo_name})")
        return
    case.evidence["call"] = "written by hand (explicit.py)"
    _judge(case, target, case.written.make, case.written.values, f"{case.check}, written by hand (explicit.py)")


def _judge(case, target: str, make: Callable[[], tuple[tuple, dict]], values: bool, how: str) -> None:
    """Calls the target with `make()`'s arguments (built seeded, afresh for each side) on the CPU
    and on the device, and compares the results and every tensor argument after the call (what
    out= and in-place forms wrote)."""
    func = resolve(target)

    def cpu_call() -> tuple[Any, tuple, dict]:
        args, kwargs = make()
        return func(*args, **kwargs), args, kwargs

    try:
        expected, cpu_args, cpu_kwargs = case.cpu(cpu_call)
    except NoReference as exc:
        raise Verdict(Outcome.ERROR, {"where": Where.HARNESS,
                                      "message": f"the CPU cannot run the call ({how}): {exc}"}) from exc
    device_args, device_kwargs = to_device(case.cpu(make), case.ctx.device)
    if "device" in device_kwargs:  # a factory: made for the CPU, it must make on the device
        device_kwargs["device"] = torch.device(case.ctx.device)
    actual = case.device(lambda: func(*device_args, **device_kwargs))
    if values:
        # A result in memory the kernel leaves uninitialized (_ctc_loss's log_alpha beyond each
        # target) differs between two CPU runs too: then only structure, shapes and dtypes.
        again, _, _ = case.cpu(cpu_call)
        try:
            compare(again, expected, case.rtol, case.atol)
        except Mismatch:
            values = False
            case.evidence["values_not_compared"] = "the CPU's result is not reproducible (uninitialized memory)"
    else:
        case.evidence["values_not_compared"] = "random draws: the device's generator need not give the CPU's numbers"
    where = {"call": how}
    case.compare(actual, expected, {**where, "compared": f"{target} result"}, values=values)
    for index, (mine, theirs) in enumerate(zip(pytree.tree_leaves((device_args, device_kwargs)),
                                               pytree.tree_leaves((cpu_args, cpu_kwargs)))):
        if isinstance(mine, torch.Tensor):
            case.compare(mine, theirs, {**where, "compared": f"{target} argument {index} after the call"},
                         values=values)
    case.compared += 1


# --- generating donors.json ------------------------------------------------------------------

# Operator names that are another's alias: their family is that one's (reviewed by hand).
ALIASES = {"__lshift__": "bitwise_left_shift", "__ilshift__": "bitwise_left_shift",
           "__rshift__": "bitwise_right_shift", "__irshift__": "bitwise_right_shift"}


def _family(name: str) -> str:
    """The base name without in-place and private underscores (_adaptive_avg_pool2d and
    adaptive_avg_pool2d.out are one family), aliases followed."""
    base = name.removeprefix("aten::").partition(".")[0]
    return ALIASES.get(base, base.strip("_"))


def family_members(target: str, names: Iterable[str]) -> list[str]:
    """Overloads of the target's family (_family()), target first."""
    base = _family(target)
    same = [n for n in names if _family(n) == base]
    return sorted(same, key=lambda n: (n != target, n))


def _runs_on_cpu(target: str, donor: str, call: tuple[tuple, dict]) -> bool:
    """Whether the target's call built from the donor's runs on the CPU, tried in a forked child:
    a call built wrongly may crash the CPU kernel itself (an out= tensor it does not resize). Run
    with OMP_NUM_THREADS=1: a child forked after OpenMP's threads started can hang in them."""
    import os
    import signal

    pid = os.fork()
    if pid == 0:
        signal.alarm(20)  # a hanging call ends the child (SIGALRM's default action)
        try:
            args, kwargs = build_call(target, donor, call)
            resolve(target)(*args, **kwargs)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        print(f"{target} from {donor}: the CPU crashed (signal {os.WTERMSIG(status)}); left out", file=sys.stderr)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def make_donors(ledger_paths: list[str]) -> None:
    """For every overload some ledger leaves unreached without a disposition, the first OpInfo
    (at float32, else int64, else bool) whose CPU run calls an overload of its family that a
    check turns into it. Writes donors.json."""
    rows = [r for path in ledger_paths for r in json.loads(Path(path).read_text())["rows"]]
    targets = sorted({r["overload"] for r in rows if r["status"] == "unreached, no disposition"})
    everything = sorted({r["overload"] for r in rows})
    wanted: dict[str, list[str]] = {t: family_members(t, everything) for t in targets}
    wanted_names = {n for members in wanted.values() for n in members}
    found: dict[str, dict[str, str]] = {}
    for dtype in (torch.float32, torch.int64, torch.bool):
        for subject, op in sorted(opinfo.by_subject().items()):
            if dtype not in op.supported_dtypes("cpu"):
                continue
            recorded = capture(op, dtype, wanted_names)
            for target, members in wanted.items():
                if target in found:
                    continue
                for donor in members:
                    if donor in recorded and (check := check_of(target, donor)):
                        if not _runs_on_cpu(target, donor, recorded[donor]):
                            continue
                        found[target] = {"opinfo": subject, "dtype": dtype_name(dtype), "donor": donor, "check": check}
                        break
    DONORS_FILE.write_text(json.dumps({
        "description": "Per target overload: the OpInfo whose CPU samples call the donor overload, the dtype, and the "
                       "check that turns the donor's call into the target's (suites/aten/README.md). Generated by "
                       "`python suites/aten/make_donors.py LEDGER.json...` from the ledgers of two float32 "
                       "ops runs (before and after the ops suite's new checks); reviewed.",
        "targets": dict(sorted(found.items()))}, indent=1) + "\n")
    print(f"{len(found)} of {len(targets)} targets have a donor", file=sys.stderr)


for _form, _description in FORMS.items():
    suite_api.check(_form, _description)(run_overload)
