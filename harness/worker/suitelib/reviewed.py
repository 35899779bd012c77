"""The one reader of the reviewed JSON documents the suites ship (tables of architectures, models,
donors, facts): each a JSON object of declared fields, whose entries the suite's own function
checks against what is installed. A document a reader cannot trust stops the listing with a
ValueError in one format, `PATH: ENTRY: PROBLEM (line N)`, instead of a KeyError or a table that
silently applies to nothing. harness/tests/test_reviewed_files.py keeps every shipped JSON file
read through here.

Each reader of such a document is declared (`@reviewed.document`), so that `neuron-conform
skiplist lint` reads every document the suites ship, as it reads their skip lists, before a run
meets a problem in one: the worker's `--suites` calls the readers each suite's modules declare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

# An entry's check: given its name and value, what is wrong with it, or None.
Check = Callable[[str, Any], str | None]

# Every declared reader of a reviewed document (document()), by its qualified name.
_READERS: dict[str, Callable[[], Any]] = {}


def document(reader: Callable[[], Any]) -> Callable[[], Any]:
    """Declares `reader` (no arguments; cached, as the suites call it often) the reader of one
    reviewed document, checked by read() and the suite's own checks."""
    _READERS[f"{reader.__module__}.{reader.__qualname__}"] = reader
    return reader


def readers() -> list[str]:
    """The readers declared so far (by the modules imported so far), by qualified name."""
    return list(_READERS)


def problems(names: list[str]) -> list[str]:
    """What is wrong with the documents the named readers read: each one's ValueError."""
    found = []
    for name in names:
        try:
            _READERS[name]()
        except ValueError as exc:
            found.append(str(exc))
    return found


@dataclass(frozen=True)
class Field:
    """A field of a document (or of an entry, for fields_problem()): its JSON type (dict, list, str,
    int, float, bool), whether it must be there, and read()'s checks of its entries (an object's
    members, named by key; an array's items, named `field[index]`) and of the members of each
    entry that is an object, named `entry/member`."""

    kind: type
    required: bool = True
    entries: Check | None = None
    members: Check | None = None


_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number",
          bool: "true or false", type(None): "null"}


def read(path: Path, fields: Mapping[str, type | Field]) -> dict[str, Any]:
    """The document at `path`, an object of exactly `fields` (a bare type: a required field), each
    field's entries checked by its functions; ValueError naming the file, and the entry and its line
    where an entry is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text, object_pairs_hook=_unique)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # not UTF-8, or a key twice in one object (_unique)
        raise ValueError(f"{path}: {exc}") from None
    if (problem := fields_problem(document, fields)) is not None:
        raise ValueError(f"{path}: {problem}")
    for field, declared in fields.items():
        value = document.get(field)
        if not isinstance(declared, Field) or not isinstance(value, (dict, list)):
            continue
        for key, entry in value.items() if isinstance(value, dict) else enumerate(value):
            name = key if isinstance(key, str) else f"{field}[{key}]"
            if declared.entries and (problem := declared.entries(name, entry)) is not None:
                raise _bad(path, text, name, problem, [field, key])
            if declared.members and isinstance(entry, dict):
                for member, part in entry.items():
                    if (problem := declared.members(member, part)) is not None:
                        raise _bad(path, text, f"{name}/{member}", problem, [field, key, member])
    return document


def fields_problem(value: Any, fields: Mapping[str, type | Field]) -> str | None:
    """What is wrong with `value` as an object of exactly `fields`, or None: unknown fields, missing
    required ones, a field of another JSON type. read()'s check of a document; an entry's check may
    start with it."""
    if not isinstance(value, dict):
        return f"expected an object, not {_name(value)}"
    declared = {f: d if isinstance(d, Field) else Field(d) for f, d in fields.items()}
    if unknown := sorted(set(value) - set(declared)):
        return f"unknown field(s) {unknown} (known: {sorted(declared)})"
    if missing := sorted(f for f, d in declared.items() if d.required and f not in value):
        return f"missing field(s) {missing}"
    for field, d in declared.items():
        if field in value and not _is(value[field], d.kind):
            return f"field '{field}' must be {_NAMES.get(d.kind, d.kind.__name__)}, not {_name(value[field])}"
    return None


def _is(value: Any, kind: type) -> bool:
    """isinstance as JSON types go: true is no integer, and an integer is a number."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, (int, float) if kind is float else kind)


def _name(value: Any) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of the document; a key given twice would silently drop its first entry."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"the key '{key}' appears twice in one object")
        seen.add(key)
    return dict(pairs)


def _bad(path: Path, text: str, entry: str, problem: str, keys: Sequence[str | int]) -> ValueError:
    line = _line(text, keys)
    return ValueError(f"{path}: {entry}: {problem}" + (f" (line {line})" if line else ""))


def _line(text: str, keys: Sequence[str | int]) -> int | None:
    """The line where the member at `keys` (object keys, array indices) starts, found by decoding
    the (valid) document member by member: a key repeated deeper down is not taken for it."""
    decode, at, start = json.JSONDecoder().raw_decode, _skip(text, 0), 0
    for key in keys:
        if text[at] not in "{[":
            return None
        close, index = "}" if text[at] == "{" else "]", 0
        at = _skip(text, at + 1)
        while text[at] != close:
            start, name = at, index
            if close == "}":
                name, at = decode(text, at)
                at = _skip(text, _skip(text, at) + 1)  # past the colon
            if name == key:
                break
            at = _skip(text, decode(text, at)[1])
            at = _skip(text, at + 1) if text[at] == "," else at
            index += 1
        else:
            return None
    return text.count("\n", 0, start) + 1


def _skip(text: str, at: int) -> int:
    """The first position from `at` that is not JSON whitespace."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at
