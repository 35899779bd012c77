"""Reviewed facts about OpInfos, kept as data (facts.json): one record per OpInfo, each fact
with the reason it holds. The suites ask `about(op, kind)`; nothing about a named op is kept in
code. The file is checked when it is read: every fact of a known kind with its fields typed and a
reason given, and every OpInfo it names one of the installed torch's (by subject, or by name for
all its variants), so a fact about an OpInfo renamed upstream stops the listing instead of
silently applying to nothing. A check that consults a kind also declares, through applying(), that
each fact of it changes something for an OpInfo it names; `skiplist lint` reads those too, so a
fact made moot upstream (an op now pointwise, a rule that no longer selects it) is found stale.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Callable

from suitelib import reviewed

from .database import by_subject, foreach_by_subject, subject

FILE = Path(__file__).with_name("facts.json")

# kind -> {field: the JSON type it holds} (besides "reason", which every fact has)
KINDS: dict[str, dict[str, type]] = {
    "cpu_arguments": {"positions": list},  # argument positions PyTorch requires on the CPU
    "may_take_another_device": {},  # operands on two devices are defined: taken with the CPU's values, or refused
    "undefined_on_cpu": {"variants": list},  # sample variants whose CPU result is undefined: not made
    "keeps_memory_format": {},  # a non-pointwise op keeping a channels_last input's layout on the CPU
    "not_random": {},  # selected by the random check's rule, but nothing is drawn
    "slow_on_cpu": {"dtypes": list, "transforms": list},  # fuzz transforms the CPU cannot finish in a case
}


def read(path: Path, known: set[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """The file's records, op -> kind -> fact; ValueError naming the file, the op and the problem
    when one is not as the format says (`known`: the OpInfo subjects and names there are)."""
    def op_problem(op: str, of_op: Any) -> str | None:
        if op not in known:
            return "no OpInfo of the installed torch has this subject or name (renamed upstream?)"
        if not isinstance(of_op, dict) or not of_op:
            return "expected an object of facts, kind -> {fields, reason}"
        for kind in of_op:
            if kind not in KINDS:
                return f"unknown fact '{kind}' (known: {', '.join(KINDS)})"
        return None

    def fact_problem(kind: str, fact: Any) -> str | None:
        fields = KINDS[kind]
        if not isinstance(fact, dict) or set(fact) != {*fields, "reason"}:
            return f"expected the fields {', '.join(sorted({*fields, 'reason'}))}"
        if not isinstance(fact["reason"], str) or not fact["reason"].strip():
            return "a fact needs the reason it holds"
        for field, kind_of in fields.items():
            if not isinstance(fact[field], kind_of) or not fact[field]:
                return f"{field} must be a non-empty {kind_of.__name__}"
        return None

    fields = {"description": str, "ops": reviewed.Field(dict, entries=op_problem, members=fact_problem)}
    return reviewed.read(path, fields)["ops"]


@reviewed.document
@cache
def _records() -> dict[str, dict[str, dict[str, Any]]]:
    ops = [*by_subject().items(), *foreach_by_subject().items()]
    return read(FILE, {name for name, _ in ops} | {op.name for _, op in ops})


def about(op, kind: str) -> dict[str, Any] | None:
    """The fact of `kind` about the OpInfo (recorded for its subject, else for its name), or None."""
    records = _records()
    found = records.get(subject(op)) or records.get(op.name) or {}
    return found.get(kind)


def applying(kind: str, applies: Callable[[Any, dict[str, Any]], bool], why: str,
             concerns: Callable[[dict[str, Any]], bool] = lambda fact: True) -> dict[str, dict[str, Any]]:
    """The facts of `kind` (those the caller `concerns` itself with: a kind several checks consult,
    each for some of its facts), each checked to change something: `applies(op, fact)` holds for an
    OpInfo it names (by subject, or one of those of its name). A fact that applies to none is
    stale (its op changed upstream, or the rule that consults it did): ValueError naming the file,
    the fact and `why` it applies to nothing. The module that consults a kind declares its check as
    a reviewed document (suitelib/reviewed.py), so that `skiplist lint` finds a stale fact."""
    ops = [*by_subject().items(), *foreach_by_subject().items()]
    found = {name: fact for name, fact in named(kind).items() if concerns(fact)}
    for name, fact in found.items():
        if not any(applies(op, fact) for s, op in ops if name in (s, op.name)):
            raise ValueError(f"{FILE}: {name}/{kind}: {why}: the fact changes nothing (stale)")
    return found


def named(kind: str) -> dict[str, dict[str, Any]]:
    """Every OpInfo subject or name with a fact of `kind`, and the fact."""
    return {op: of_op[kind] for op, of_op in _records().items() if kind in of_op}
