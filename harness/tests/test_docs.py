"""Docs that cannot drift: every repository path the docs, READMEs, docstrings and comments cite
exists, and every suite's README names exactly the checks its registry declares.

A path is cited as (1) a token that starts with one of the repository's top-level folders
(`harness/worker/comparison.py`), resolved from the root; (2) a Markdown link, resolved from the
citing file's folder; (3) a backticked relative path with a folder in it (`suitelib/opinfo/layouts.py`),
which must end some tracked path. Placeholders (`<suite>`, `NAME/`, `*.json`) and paths inside
torch's own tree are not repository paths.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CITING = (".md", ".py", ".cpp", ".h", ".toml", ".yml")  # prose and code that explains itself
PLACEHOLDER = re.compile(r"[<>*{}]|(?:^|/)[A-Z_]{2,}(?:/|$)")
# torch's tree, includes, links out, what a build or a run writes
NOT_OURS = ("torch/", "ATen/", "c10/", "http", "out/", "build/", "site-packages/")


@cache
def tracked() -> tuple[str, ...]:
    """The tracked files the working tree has: one deleted and not yet committed is cited by nothing."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return tuple(f for f in listed.stdout.split() if (ROOT / f).exists())


def citing_files() -> list[str]:
    return [f for f in tracked() if f.endswith(CITING) and not f.startswith("harness/tests/golden/")]


def cited_paths(file: str) -> list[tuple[int, str, Path | None]]:
    """(line, path as cited, where it must exist: a path, or None for "ends a tracked path")."""
    tops = sorted({f.split("/")[0] for f in tracked() if "/" in f})
    rooted = re.compile(r"(?<![\w./-])((?:%s)/[\w./<>*{}-]*[\w*>}/])" % "|".join(map(re.escape, tops)))
    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    relative = re.compile(r"`([\w.-]+(?:/[\w.-]+)+\.(?:py|json|md|cpp|h|sh|yml|toml))`")
    text = (ROOT / file).read_text(errors="replace")
    found: list[tuple[int, str, Path | None]] = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in rooted.finditer(line):
            found.append((number, m.group(1).rstrip("."), ROOT / m.group(1).rstrip(".")))
        if file.endswith(".md"):
            for m in link.finditer(line):
                found.append((number, m.group(1), (ROOT / file).parent / m.group(1)))
        for m in relative.finditer(line):
            if not rooted.fullmatch(m.group(1)):
                found.append((number, m.group(1), None))
    return [(n, cited, where) for n, cited, where in found
            if not PLACEHOLDER.search(cited) and not cited.startswith(NOT_OURS)]


def test_every_cited_repository_path_exists() -> None:
    missing = []
    for file in citing_files():
        for number, cited, where in cited_paths(file):
            exists = where.exists() if where is not None else any(
                t == cited or t.endswith("/" + cited) or t.startswith(cited.rstrip("/") + "/") for t in tracked())
            if not exists:
                missing.append(f"{file}:{number}: {cited}")
    assert not missing, "paths cited that the repository does not have:\n" + "\n".join(missing)


def test_the_path_check_sees_a_missing_path(tmp_path: Path) -> None:
    # The check must be able to fail: a rooted path, a link and a relative path that do not exist.
    doc = ROOT / "docs" / "architecture.md"
    lines = {n: cited for n, cited, _ in cited_paths(str(doc.relative_to(ROOT)))}
    assert any(cited.startswith("harness/") for cited in lines.values())
    probe = ROOT / "docs" / f"_probe_{tmp_path.name}.md"
    gone = ["harness/worker/" + "gone.py", "../suites/gone/" + "README.md", "suitelib/" + "gone.py"]
    probe.write_text(f"see `{gone[0]}`, [x]({gone[1]}), `{gone[2]}`\n")
    try:
        cited = cited_paths(str(probe.relative_to(ROOT)))
    finally:
        probe.unlink()
    assert [c for _, c, _ in cited] == gone
    assert not any(where.exists() if where else False for _, _, where in cited)


def readme_checks(readme: Path) -> list[str] | None:
    """The check names a suite README's check table lists (first column headed `check`, or a
    column headed `declares`), in order; None when it has no such table."""
    names: list[str] | None = None
    column = None
    for line in readme.read_text().splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:
            header = [c.lower() for c in cells]
            column = header.index("declares") if "declares" in header else 0 if header[0] == "check" else -1
            if column >= 0:
                names = names or []
            continue
        if column >= 0 and not set(cells[0]) <= {"-", " ", ":"}:
            names.extend(re.findall(r"`([\w-]+)`", cells[column]))  # type: ignore[union-attr]
    return names


@cache
def registries() -> dict[str, list[str]]:
    """Each project suite's declared checks, in the registry's order (loaded in a fresh process:
    loading a suite imports torch and its OpInfos)."""
    script = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "harness" / "worker")!r})
import suite_api
print(json.dumps({{name: list(suite_api.load_suite(name).checks) for name in suite_api.find_suites()}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(p.parent.name for p in (ROOT / "suites").glob("*/suite.py")))
def test_a_suite_readme_lists_the_checks_its_registry_declares(name: str) -> None:
    declared = registries()[name]
    readme = ROOT / "suites" / name / "README.md"
    listed = readme_checks(readme)
    if listed is None:
        # A suite without a check table (its cases are tabled otherwise) still names every check.
        text = readme.read_text()
        unnamed = [c for c in declared if not re.search(rf"`[^`]*\b{re.escape(c)}\b[^`]*`", text)]
        assert not unnamed, f"suites/{name}/README.md never names the checks {unnamed}"
        return
    assert listed == declared, (f"suites/{name}/README.md's check table lists {listed}; the registry declares "
                                f"{declared}, in this order")


def test_the_suites_readme_has_a_row_for_every_suite_and_no_other():
    """suites/README.md's table of suites (first column `folder`): one row per suite folder."""
    rows = [re.fullmatch(r"`(\w+)/`", line.split("|")[1].strip()) for line in
            (ROOT / "suites" / "README.md").read_text().splitlines() if line.startswith("| `")]
    listed = [m.group(1) for m in rows if m]
    assert sorted(listed) == sorted(registries()), (listed, sorted(registries()))
