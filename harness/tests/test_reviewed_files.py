"""The reviewed JSON documents the suites ship, each read through the one validated reader
(harness/worker/suitelib/reviewed.py): the reader's rules, every shipped document read cleanly by
its suite's function, and no shipped JSON file without such a reader (a new one fails here until
its reader goes through reviewed.read and is added to READERS)."""

from __future__ import annotations

import importlib
import json
import re
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

from conform_cli import REPO, suite_module

sys.path.insert(0, str(REPO / "harness" / "worker"))
from suitelib import reviewed  # noqa: E402
from suitelib.reviewed import Field  # noqa: E402

# Each shipped document: the module reading it and its functions that do (cached: cleared first).
READERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "harness/worker/suitelib/opinfo/facts.json": ("suitelib.opinfo.facts", ("_records",)),
    "harness/worker/suitelib/tiny_models.json": ("suitelib.tiny_models", ("overrides", "label_layouts")),
    "suites/aten/donors.json": ("neuron_conform_suites.aten.suite", ("_donors",)),
    "suites/hf/most_used.json": ("neuron_conform_suites.hf.tables", ("most_used",)),
    "suites/sizes/models.json": ("neuron_conform_suites.sizes.sizes_models", ("models",)),
}
# JSON files read elsewhere: a suite's own skip list (the C++ harness reads it, against
# skiplists/schema.json).
NOT_REVIEWED = ("suites/*/not_runnable.json",)
FIELDS = {"description": str, "items": Field(dict), "names": Field(list, required=False),
          "count": Field(float, required=False)}


def refusal(path: Path, text: str, fields=FIELDS) -> str:
    path.write_text(text)
    with pytest.raises(ValueError) as refused:
        reviewed.read(path, fields)
    return str(refused.value)


def test_a_file_that_cannot_be_read_is_named(tmp_path):
    missing = tmp_path / "gone.json"
    with pytest.raises(ValueError, match=re.escape(f"{missing}: cannot be read (No such file or directory)")):
        reviewed.read(missing, FIELDS)
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path}: cannot be read (Is a directory)")):
        reviewed.read(tmp_path, FIELDS)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"description": "caf\xe9"}')
    with pytest.raises(ValueError, match=re.escape(f"{latin}: 'utf-8' codec can't decode")):
        reviewed.read(latin, FIELDS)


def test_invalid_json_is_named_with_its_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    assert refusal(path, '{\n  "description": "x",\n  "items": {"a": 1,}\n}\n') == \
        f"{path}: not valid JSON: Expecting property name enclosed in double quotes (line 3, column 20)"
    assert refusal(path, "") == f"{path}: not valid JSON: Expecting value (line 1, column 1)"
    # a key given twice would silently drop its first entry
    assert refusal(path, '{"description": "x", "items": {"a": 1, "a": 2}}') == \
        f"{path}: the key 'a' appears twice in one object"


def test_the_document_holds_exactly_the_declared_fields_each_of_its_type(tmp_path):
    path = tmp_path / "doc.json"
    assert refusal(path, "[]") == f"{path}: expected an object, not an array"
    assert refusal(path, '{"description": "", "items": {}, "itemz": {}}') == \
        f"{path}: unknown field(s) ['itemz'] (known: ['count', 'description', 'items', 'names'])"
    assert refusal(path, '{"names": []}') == f"{path}: missing field(s) ['description', 'items']"
    assert refusal(path, '{"description": "", "items": []}') == \
        f"{path}: field 'items' must be an object, not an array"
    assert refusal(path, '{"description": null, "items": {}}') == \
        f"{path}: field 'description' must be a string, not null"
    assert refusal(path, '{"description": "", "items": {}, "count": true}') == \
        f"{path}: field 'count' must be a number, not true or false"
    flag = {"description": str, "items": dict, "n": bool}
    assert refusal(path, '{"description": "", "items": {}, "n": 1}', flag) == \
        f"{path}: field 'n' must be true or false, not an integer"
    # the optional fields may be left out; an integer is a number
    path.write_text('{"description": "d", "items": {"a": 1}, "count": 2}')
    assert reviewed.read(path, FIELDS) == {"description": "d", "items": {"a": 1}, "count": 2}
    # an entry's own fields, by the same rules
    assert reviewed.fields_problem({"architecture": "X"}, {"architecture": str, "config": dict}) == \
        "missing field(s) ['config']"
    assert reviewed.fields_problem({"architecture": "X", "config": {}}, {"architecture": str, "config": dict}) is None


def test_an_entry_s_problem_names_the_file_the_entry_and_its_line(tmp_path):
    """PATH: ENTRY: PROBLEM (line N), the line found by key, not fooled by the same key deeper in an
    earlier entry; an array's items are named field[index], an entry's members entry/member."""
    path = tmp_path / "doc.json"
    path.write_text('{\n  "description": "b is also a key inside a",\n  "items": {\n    "a": {"b": 1, "ok": true},\n'
                    '    "b": {"n": -1}\n  },\n  "names": [\n    "x",\n    "y"\n  ]\n}\n')

    def negative(name, entry):
        return f"n is {entry['n']}, below 0" if entry.get("n", 0) < 0 else None

    def refused(name, entry):
        return f"{entry!r} is refused" if entry == "y" else None

    def not_true(member, value):
        return None if value is True else f"{value!r} is not true"

    for fields, message in (
            ({**FIELDS, "items": Field(dict, entries=negative)}, f"{path}: b: n is -1, below 0 (line 5)"),
            ({**FIELDS, "names": Field(list, entries=refused)}, f"{path}: names[1]: 'y' is refused (line 9)"),
            ({**FIELDS, "items": Field(dict, members=not_true)}, f"{path}: a/b: 1 is not true (line 4)")):
        with pytest.raises(ValueError) as refusal_of:
            reviewed.read(path, fields)
        assert str(refusal_of.value) == message
    seen = []
    reviewed.read(path, {**FIELDS, "names": Field(list, entries=lambda name, entry: seen.append((name, entry)))})
    assert seen == [("names[0]", "x"), ("names[1]", "y")]
    # on one line, the line is still found; without a key to find, the message has none
    path.write_text(json.dumps({"description": "", "items": {"b": {"n": -2}}}))
    with pytest.raises(ValueError, match=re.escape(f"{path}: b: n is -2, below 0 (line 1)")):
        reviewed.read(path, {**FIELDS, "items": Field(dict, entries=negative)})


@pytest.mark.parametrize("file", sorted(READERS))
def test_each_shipped_file_reads_cleanly_through_its_suite_s_reader(file, monkeypatch):
    suite_module("hf", "tables")  # the suites' package made, as the worker makes it
    module_name, functions = READERS[file]
    module = importlib.import_module(module_name)
    read, paths = reviewed.read, []
    monkeypatch.setattr(reviewed, "read", lambda path, fields: paths.append(path.resolve()) or read(path, fields))
    for name in functions:
        function = getattr(module, name)
        function.cache_clear()
        assert function(), f"{module_name}.{name}() read nothing from {file}"
    assert paths and set(paths) == {REPO / file}, f"{module_name} does not read {file} through reviewed.read"


def without_reader(files: list[str]) -> list[str]:
    """The JSON files neither read through reviewed.read (READERS) nor read elsewhere (NOT_REVIEWED)."""
    return sorted(f for f in files if f not in READERS and not any(fnmatch(f, p) for p in NOT_REVIEWED))


def test_every_shipped_json_file_has_a_validated_reader():
    shipped = [p.relative_to(REPO).as_posix() for folder in ("suites", "harness/worker/suitelib")
               for p in (REPO / folder).rglob("*.json")]
    assert without_reader(shipped) == [], "read each through suitelib/reviewed.py and add it to READERS"
    assert set(READERS) <= set(shipped), "READERS names a file no longer shipped"
    unread = "/".join(("suites", "hf", "a_new_table.json"))  # a file shipped without a reader
    assert without_reader([*shipped, unread]) == [unread]
