"""The architecture as tests: which layer may include which, SQL only in the store, the
vocabulary spelt out only where it is defined, every shipped skip list valid against its schema.
docs/architecture.md draws the layers these tests hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conform_cli import REPO

SRC = REPO / "harness" / "src"
REPORTS = REPO / "reports" / "src"
VOCABULARY = json.loads((REPO / "harness" / "vocabulary.json").read_text())

# Each layer and the layers it may include (itself always). main.cpp sits on top.
ALLOWED = {
    "common": set(),
    "record": {"common"},
    "expect": {"common"},
    "execute": {"common"},
    "plan": {"common", "execute"},
    "schedule": {"common", "execute"},
    "compare": {"common", "record"},
    "check": {"common", "record"},
    "reports": {"common", "record", "compare"},
    "commands": {"common", "record", "expect", "execute", "plan", "schedule", "compare", "check", "reports"},
    "main": {"commands", "common"},
}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def sources() -> list[tuple[str, Path]]:
    """(layer, file) for every C++ source of the harness and the reports."""
    out = [("reports", f) for f in sorted(REPORTS.glob("*.[ch]*"))]
    for f in sorted(SRC.rglob("*.[ch]*")):
        out.append(("main" if f.parent == SRC else f.relative_to(SRC).parts[0], f))
    return out


def layer_of(include: str, own: str) -> str:
    if "/" in include:
        return include.split("/")[0]
    return "reports" if (REPORTS / include).exists() else own


@pytest.mark.parametrize("layer,path", sources(), ids=lambda v: str(v).rsplit("/", 1)[-1])
def test_each_file_includes_only_what_its_layer_may(layer, path):
    assert layer in ALLOWED, f"{path}: folder '{layer}' is not a known layer (add it to ALLOWED and the docs)"
    wrong = [inc for inc in INCLUDE.findall(path.read_text())
             if (target := layer_of(inc, layer)) != layer and target not in ALLOWED[layer]]
    assert not wrong, f"{path.relative_to(REPO)} ({layer}) includes {wrong}"


def test_sql_lives_in_record_only():
    sql = re.compile(r'"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|PRAGMA)\s', re.I)
    offenders = [str(f.relative_to(REPO)) for layer, f in sources() if layer != "record" and sql.search(f.read_text())]
    assert offenders == []


# Words of the vocabulary that are also words of another vocabulary, where they stand for that.
HOMONYMS = {
    ("reports/src/Junit.cpp", "error"): "JUnit's <error> element",
    ("harness/src/record/Store.cpp", "forward_ad"): "the ops suite's check, in the v3 migration's data",
    ("suites/ops/suite.py", "forward_ad"): "the ops suite's check",
    ("harness/worker/compilation.py", "graph_break"): "Dynamo's own counter of graph breaks",
}


def test_vocabulary_literals_appear_only_where_defined():
    # Every word of the vocabulary that the code must never spell out as a string of its own.
    # ("dtype" is also the name of a case id's field, everywhere: it cannot be told apart.)
    words = ({o["name"] for o in VOCABULARY["outcomes"]} | {c["name"] for c in VOCABULARY["categories"]}) - {"dtype"}
    literal = re.compile(r'"(' + "|".join(sorted(map(re.escape, words))) + r')"')
    defined_in = {SRC / "common" / "Vocabulary.h"}
    offenders = {}
    for _, f in sources():
        if f in defined_in:
            continue
        name = str(f.relative_to(REPO))
        hits = {h for h in literal.findall(f.read_text()) if (name, h) not in HOMONYMS}
        if hits:
            offenders[name] = sorted(hits)
    python = [*REPO.glob("harness/worker/*.py"), *REPO.glob("suites/*/suite.py")]
    for f in python:
        name = str(f.relative_to(REPO))
        hits = {h for h in literal.findall(f.read_text()) if (name, h) not in HOMONYMS}
        if hits:
            offenders[name] = sorted(hits)
    assert offenders == {}, "spell these through the vocabulary (common/Vocabulary.h, harness/worker/vocabulary.py)"


def test_every_shipped_skip_list_follows_its_schema():
    import jsonschema

    schema = json.loads((REPO / "skiplists" / "schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    lists = sorted(p for p in (REPO / "skiplists").glob("*.json") if p.name != "schema.json")
    assert lists, "no skip lists shipped"
    for path in lists:
        jsonschema.validate(json.loads(path.read_text()), schema), path
