"""The docs name what the code has: every command of the CLI, every mode of the worker and every
suite appears where a reader looks for it, so adding one without its documentation fails here."""

from __future__ import annotations

import re
import subprocess
import sys

from conform_cli import REPO, cli

ARCHITECTURE = (REPO / "docs" / "architecture.md").read_text()
README = (REPO / "README.md").read_text()
HARNESS_README = (REPO / "harness" / "README.md").read_text()
SUITES_README = (REPO / "suites" / "README.md").read_text()


def commands() -> list[str]:
    """The subcommands `neuron-conform --help` lists."""
    text = cli("--help").stdout
    section = text.split("Subcommands:", 1)[1]
    return re.findall(r"^  ([a-z][a-z-]*)\s", section, re.M)


def worker_modes() -> list[str]:
    """The worker's modes: the options of its one required mutually exclusive group."""
    usage = subprocess.run([sys.executable, str(REPO / "harness" / "worker" / "worker.py"), "--help"],
                           capture_output=True, text=True, check=True).stdout
    group = re.search(r"\((--[a-z]+(?: [A-Z_]+)?(?: \| --[a-z]+(?: [A-Z_]+)?)+)\)", usage)
    assert group, usage
    return [mode.split()[0] for mode in group[1].split(" | ")]


def suites() -> list[str]:
    return sorted(p.parent.name for p in (REPO / "suites").glob("*/suite.py"))


def test_every_command_is_in_the_architecture_and_the_readme():
    found = commands()
    assert {"run", "gate", "ledger", "api-compat"} <= set(found), found  # the parse found the list
    missing = [c for c in found if f"`{c}`" not in ARCHITECTURE]
    assert missing == [], f"commands docs/architecture.md does not name: {missing}"
    missing = [c for c in found if f"neuron-conform {c}" not in README]
    assert missing == [], f"commands README.md never shows: {missing}"


def test_every_worker_mode_is_in_the_harness_readme_and_the_workers_docstring():
    found = worker_modes()
    assert {"--list", "--serve", "--zygote"} <= set(found), found
    worker = (REPO / "harness" / "worker" / "worker.py").read_text()
    docstring = worker.split('"""', 2)[1]
    assert [m for m in found if f"- `{m}" not in HARNESS_README] == []
    assert [m for m in found if f"\n  {m}" not in docstring] == []


def test_every_suite_is_in_the_suites_table_and_has_a_readme():
    found = suites()
    assert {"ops", "hf", "upstream"} <= set(found)
    assert [s for s in found if f"| `{s}/` |" not in SUITES_README] == []
    assert [s for s in found if not (REPO / "suites" / s / "README.md").is_file()] == []
    assert [s for s in found if f"`{s}`" not in ARCHITECTURE] == []
