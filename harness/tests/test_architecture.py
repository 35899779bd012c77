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
    "report": {"common", "record", "expect", "compare", "check"},
    "commands": {"common", "record", "expect", "execute", "plan", "schedule", "compare", "check", "report"},
    "main": {"commands", "common"},
}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def sources() -> list[tuple[str, Path]]:
    """(layer, file) for every C++ source of the harness: its folder under src/ is its layer."""
    return [("main" if f.parent == SRC else f.relative_to(SRC).parts[0], f) for f in sorted(SRC.rglob("*.[ch]*"))]


def layer_of(include: str) -> str:
    """The layer of an included header: its folder under src/. Every include names it, so that
    every arrow shows here; a bare name is no layer, and fails."""
    return include.split("/")[0] if "/" in include else ""


@pytest.mark.parametrize("layer,path", sources(), ids=lambda v: str(v).rsplit("/", 1)[-1])
def test_each_file_includes_only_what_its_layer_may(layer, path):
    assert layer in ALLOWED, f"{path}: folder '{layer}' is not a known layer (add it to ALLOWED and the docs)"
    wrong = [inc for inc in INCLUDE.findall(path.read_text())
             if (target := layer_of(inc)) != layer and target not in ALLOWED[layer]]
    assert not wrong, f"{path.relative_to(REPO)} ({layer}) includes {wrong}"


def test_sql_lives_in_record_only():
    sql = re.compile(r'"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|PRAGMA)\s', re.I)
    offenders = [str(f.relative_to(REPO)) for layer, f in sources() if layer != "record" and sql.search(f.read_text())]
    assert offenders == []


# Tests and CI read results through `neuron-conform query` (conform_cli.results, runs, ...) and
# plant runs through `neuron-conform import` (conform_cli.import_runs), never the DB's schema, so
# that a migration of the store changes none of them. Below the store on purpose, for a reason:
READS_BELOW_THE_STORE = {
    "harness/tests/test_store_stress.py": "the store's own stress test: integrity and rows, as SQLite sees them",
}
SQL = re.compile(r"\b(INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|SELECT\s+.+\s+FROM|CREATE\s+TABLE)\b", re.I)


def test_tests_and_ci_read_results_through_query():
    files = [f for f in [*(REPO / "harness" / "tests").glob("*.py"), *(REPO / "ci").glob("*.sh"), *(REPO / "ci").glob("*.py")]
             if f.resolve() != Path(__file__).resolve()]  # this file names the words to look for them
    offenders = sorted(str(f.relative_to(REPO)) for f in files
                       if (re.search(r"\bsqlite3\b", f.read_text()) or SQL.search(f.read_text()))
                       and str(f.relative_to(REPO)) not in READS_BELOW_THE_STORE)
    assert offenders == [], f"read results through `neuron-conform query` and write them through `import` " \
                            f"(conform_cli), not SQL: {offenders}"
    fixtures = sorted(str(f.relative_to(REPO)) for f in (REPO / "harness" / "tests" / "data").rglob("*.sql"))
    assert fixtures == [], f"a fixed run is a `query` document (data/*.json) that `import` records: {fixtures}"
    stale = [f for f in READS_BELOW_THE_STORE if "sqlite3" not in (REPO / f).read_text()]
    assert stale == [], f"no longer below the store: drop from READS_BELOW_THE_STORE: {stale}"


# Words of the vocabulary that are also words of another vocabulary, where they stand for that:
# (file, word) for the whole file, or (file, word, text on the literal's line) for those lines only.
HOMONYMS = {
    ("harness/src/report/Junit.cpp", "error"): "JUnit's <error> element",
    ("suites/ops/ops_autograd.py", "forward_ad"): "the ops suite's check",
    ("harness/worker/compilation.py", "graph_break"): "Dynamo's own counter of graph breaks",
    ("backend/tests/python/test_engine.py", "error"): "the backend's NEURONSIM_FALLBACK and NEURONSIM_64BIT mode",
    ("harness/worker/suitelib/opinfo/argument_variants.py", "sparse", '"sparse"}'): "an argument's name",
    ("suites/upstream/suite.py", "import", 'IMPORT_CHECK = "import"'): "the upstream suite's check",
    ("harness/worker/pytorch_configs.py", "forward_ad"): "the ops suite's check",
    ("harness/src/commands/SkiplistCommand.cpp", "import"): "the skiplist subcommand",
    ("harness/src/commands/ImportCommand.cpp", "import"): "the import command",
}
# Text that is history and never changes: the schema migrations (test_vocabulary.cpp checks that
# their CHECKs hold the vocabulary's words).
HISTORY = {"harness/src/record/Store.cpp": re.compile(r"kMigrations\[\] = \{.*?\n\};", re.S)}


# The vocabulary's tables whose words no other file may spell out as a literal of its own. (The
# other tables' words, "native", "device", "view", ..., are everyday words of the code.)
SPELT_THROUGH_THE_VOCABULARY = ("outcomes", "categories", "run_statuses", "wheres", "stages", "evidence_flags")


def vocabulary_literal() -> re.Pattern[str]:
    """A string literal that is exactly one word of the vocabulary: "word", 'word' (Python; and
    SQL inside a C++ string), with any Python prefix (r, f, b), or a C++ raw string R"(word)",
    R"x(word)x". ("dtype" is also the name of a case id's field, everywhere: it cannot be told
    apart.)"""
    words = {row["name"] for table in SPELT_THROUGH_THE_VOCABULARY for row in VOCABULARY[table]} - {"dtype"}
    alternatives = "|".join(sorted(map(re.escape, words)))
    return re.compile(rf'R"(?P<delim>[^()\\\s"]{{0,16}})\((?P<raw>{alternatives})\)(?P=delim)"'
                      rf'|(?P<quote>["\'])(?P<quoted>{alternatives})(?P=quote)')


def literal_words(text: str, pattern: re.Pattern[str]) -> set[str]:
    return {word for word, _ in literals(text, pattern)}


def literals(text: str, pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    """(word, the line it is on) for each literal of a word of the vocabulary in `text`."""
    out = []
    for m in pattern.finditer(text):
        start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        out.append((m["raw"] or m["quoted"], text[start:end if end >= 0 else len(text)]))
    return out


def is_homonym(name: str, word: str, line: str) -> bool:
    return (name, word) in HOMONYMS or any(
        key[:2] == (name, word) and key[2] in line for key in HOMONYMS if len(key) == 3)


def python_sources() -> list[Path]:
    """Every Python file of the worker, the suites and the reports."""
    files = [*REPO.glob("harness/worker/**/*.py"), *REPO.glob("suites/**/*.py"), *REPO.glob("reports/**/*.py")]
    return sorted(f for f in files if "__pycache__" not in f.parts)


def test_the_literal_pattern_sees_every_kind_of_literal():
    pattern = vocabulary_literal()
    text = """a = "pass"; b = 'fail'; c = R"(crash)"; d = R"x(harness)x"; e = r"build"; f = f'import'
    g = "CHECK (status IN ('running', 'complete', 'interrupted'))"; h = "passing"; i = "'pass" """
    assert literal_words(text, pattern) == {"pass", "fail", "crash", "harness", "build", "import",
                                            "running", "complete", "interrupted"}


def test_vocabulary_literals_appear_only_where_defined():
    pattern = vocabulary_literal()
    defined_in = {SRC / "common" / "Vocabulary.h", REPO / "harness" / "worker" / "vocabulary.py"}
    offenders = {}
    for f in [f for _, f in sources()] + python_sources():
        if f in defined_in:
            continue
        name = str(f.relative_to(REPO))
        text = HISTORY[name].sub("", f.read_text()) if name in HISTORY else f.read_text()
        hits = {word for word, line in literals(text, pattern) if not is_homonym(name, word, line)}
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
