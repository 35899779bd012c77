"""A suite is one folder: a throwaway suite, declared in a temporary folder, reports with its own
noun and headline; a suite that does not describe itself, or lists a check it did not declare,
is refused before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conform_cli import cli, query

WIDGETS = '''
import torch
from vocabulary import Outcome


def describe_suite():
    return {"noun": "widget", "nouns": "widgets",
            "checks": {"spin": "spins on the device", "paint": "paints on the device"},
            "native_checks": ["spin"], "native_phrase": "spin natively",
            "headlines": [{"name": "favourites", "title": "favourite", "subjects": ["gear"]}]}


def list_cases():
    for subject in ("cog", "gear"):
        for check in CHECKS:
            yield {"id": f"widgets/{subject}/float32/{check}", "suite": "widgets", "subject": subject,
                   "dtype": "float32", "check": check}


def run_case(case_id, ctx):
    _, subject, _, check = case_id.split("/")
    x = torch.ones(3, device=ctx.device)
    if (subject, check) == ("cog", "spin"):
        return Outcome.FAIL, {"message": "the cog wobbles", "max_abs_error": 1.0}
    (x + x).cpu()
    return Outcome.PASS, {}
'''


def make_suite(root: Path, body: str, checks: str = '("spin", "paint")') -> Path:
    folder = root / "suites" / "widgets"
    folder.mkdir(parents=True)
    (folder / "suite.py").write_text(f"CHECKS = {checks}\n" + textwrap.dedent(body))
    return root / "suites"


@pytest.fixture
def suites(tmp_path, monkeypatch):
    def install(body: str = WIDGETS, checks: str = '("spin", "paint")') -> None:
        monkeypatch.setenv("NEURON_CONFORM_SUITES", str(make_suite(tmp_path, body, checks)))
    return install


def test_a_throwaway_suite_reports_with_its_own_noun_and_headline(db, suites):
    suites()
    cli("run", "--suite", "widgets", "--db", str(db), "-j", "1", "--timeout", "120")
    latest = db.parent / "latest"
    cov = json.loads((latest / "coverage.json").read_text())
    assert cov["suite"]["noun"] == "widget" and cov["suite"]["native_checks"] == ["spin"]
    assert cov["headline"]["subject_text"] == "1 of 2 widgets spin natively"
    assert [h["text"] for h in cov["headline"]["headlines"]] == ["1 of 1 favourite widgets spin natively"]
    assert "1 of 2 widgets spin natively; 1 of 1 favourite widgets spin natively" in cov["headline"]["text"]
    cog = next(s for s in cov["subjects"] if s["name"] == "cog")
    assert cog["verdict"] == "blocked" and cog["blockers"] == ["(fail in spin, no single op)"]
    summary = (latest / "summary.md").read_text()
    assert "### Widgets" in summary and "| widget | verdict |" in summary and "OpInfo" not in summary
    # The declaration is stored with the run: its reports render from it, whatever the folder holds now.
    stored = json.loads(query(db, "SELECT suite_info FROM runs")[0][0])
    assert stored["nouns"] == "widgets"
    cli("report", "--db", str(db), "--out", str(db.parent / "again"))
    assert "### Widgets" in (db.parent / "again" / "summary.md").read_text()


def test_a_suite_that_does_not_describe_itself_is_refused(db, suites):
    suites(WIDGETS.replace("def describe_suite():", "def something_else():"))
    result = cli("run", "--suite", "widgets", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "suite 'widgets' cannot list its cases: its suite.py has no describe_suite()" in result.stderr
    assert query(db, "SELECT COUNT(*) FROM results") == [(0,)]


def test_a_case_whose_check_is_not_declared_is_refused(db, suites):
    suites(checks='("spin", "paint", "polish")')
    result = cli("run", "--suite", "widgets", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "suite 'widgets' lists case widgets/cog/float32/polish whose check 'polish' its describe_suite() " \
           "does not declare" in result.stderr


THREADS = '''
import torch
from vocabulary import Outcome


def describe_suite():
    return {"checks": {"count": "counts the worker's intra-op threads"}, "share_cores": SHARE}


def list_cases():
    for subject in ("a", "b"):
        yield {"id": f"widgets/{subject}/-/count", "suite": "widgets", "subject": subject, "dtype": "-",
               "check": "count"}


def run_case(case_id, ctx):
    return Outcome.PASS, {"threads": torch.get_num_threads()}
'''


def test_a_suite_that_shares_the_cores_gives_each_worker_its_share(db, monkeypatch, tmp_path):
    """-j workers that each ran a pool of every core oversubscribed them (suites/README.md,
    share_cores); a suite that does not ask keeps the pools it was reviewed with."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    default = int(subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                                 capture_output=True, text=True, check=True).stdout)

    def threads(share: bool, jobs: str) -> set[int]:
        root = tmp_path / f"share-{share}-{jobs}"
        monkeypatch.setenv("NEURON_CONFORM_SUITES", str(make_suite(root, f"SHARE = {share}\n" + THREADS)))
        cli("run", "--suite", "widgets", "--db", str(db), "-j", jobs, "--reruns", "0")
        run = query(db, "SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1")[0][0]
        return {json.loads(e)["threads"] for (e,) in query(db, "SELECT evidence FROM results WHERE run_id = ?", run)}

    assert threads(False, "2") == {default}  # torch's own default pool
    assert threads(True, "2") == {max(1, (os.cpu_count() or 1) // 2)}  # online cores / jobs, as the harness counts
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a count the user set is kept
    assert threads(True, "1") == {1}


GEARS = '''
import suite_api
from vocabulary import Outcome

SETTINGS = {}


def describe_suite():
    return {"checks": {"turn": "turns the gear"},
            "options": {"teeth": {"type": "int", "default": 12, "help": "teeth per gear"},
                        "oiled": {"type": "bool", "default": False, "help": "whether the gears are oiled"},
                        "drawing": {"type": "path", "help": "where the gear's drawing is"}}}


def configure(options):
    if options["teeth"] < 3:
        raise ValueError(f"teeth {options['teeth']}: a gear needs at least 3")
    SETTINGS.update(options)


def list_cases():
    yield from suite_api.cases("widgets", [("gear", "-", "turn"), ("cog", "-", "turn")])


def run_case(case_id, ctx):
    suite_api.parse(case_id, "widgets", ["turn"])
    return Outcome.PASS, {"options": SETTINGS}
'''


def test_a_suite_outside_the_tree_declares_options_the_cli_parses_without_knowing_it(db, suites, tmp_path):
    """No C++ knows this suite or its options: it declares them, the worker types them, the run
    stores them resolved (a path made absolute), and the flag spelling is the same option."""
    suites(GEARS, checks='("turn",)')
    listed = cli("suites", "--json")
    gears = next(s for s in json.loads(listed.stdout) if s["suite"] == "widgets")
    assert gears["description"]["options"]["teeth"] == {"type": "int", "default": 12, "help": "teeth per gear"}
    assert "teeth per gear" in cli("suites").stdout

    cli("run", "--suite", "widgets", "--suite-option", "teeth=40", "--oiled", "--drawing", "gear.svg",
        "--db", str(db), "--reruns", "0", "-j", "1", cwd=tmp_path)
    [(stored,)] = query(db, "SELECT suite_options FROM runs")
    expected = {"teeth": 40, "oiled": True, "drawing": str(tmp_path / "gear.svg")}
    assert json.loads(stored) == expected
    evidence = {json.loads(e)["options"]["teeth"] for (e,) in query(db, "SELECT evidence FROM results")}
    assert evidence == {40}

    for args, says in [(["--suite-option", "teeth=many"], "option teeth takes an int: invalid literal"),
                       (["--teeth", "2"], "teeth 2: a gear needs at least 3"),
                       (["--colour", "red"], "the widgets suite has no option colour (it takes: drawing, oiled, teeth")]:
        result = cli("run", "--suite", "widgets", *args, "--db", str(db), check=False)
        assert result.returncode == 2 and says in result.stderr, result.stderr
    assert query(db, "SELECT count(*) FROM runs") == [(1,)]  # refused before a run was recorded
