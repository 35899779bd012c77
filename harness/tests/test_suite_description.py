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

from conform_cli import cli, evidences, recorded, run_record, runs

WIDGETS = '''
import torch
import suite_api
from sides import Verdict
from vocabulary import Outcome

SUITE = suite_api.Suite(__name__, noun="widget", nouns="widgets", native_phrase="spin natively",
                        headlines=lambda: [{"name": "favourites", "title": "favourite", "subjects": ["gear"]}])
SUITE.makes_cases(suite_api.Case)


@suite_api.check("spin", "spins on the device")
def spin(case):
    if case.id.subject == "cog":
        raise Verdict(Outcome.FAIL, {"message": "the cog wobbles", "max_abs_error": 1.0})
    x = torch.ones(3, device=case.ctx.device)
    (x + x).cpu()


@suite_api.check("paint", "paints on the device", native=False)
def paint(case):
    (torch.ones(3, device=case.ctx.device) * 2).cpu()


@SUITE.lists
def list_cases():
    return ((subject, "float32", check) for subject in ("cog", "gear") for check in LISTED)

'''


def make_suite(root: Path, body: str, listed: str = '("spin", "paint")') -> Path:
    folder = root / "suites" / "widgets"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "suite.py").write_text(f"LISTED = {listed}\n" + textwrap.dedent(body))
    return root / "suites"


@pytest.fixture
def suites(tmp_path, monkeypatch):
    def install(body: str = WIDGETS, listed: str = '("spin", "paint")') -> Path:
        root = make_suite(tmp_path, body, listed)
        monkeypatch.setenv("NEURON_CONFORM_SUITES", str(root))
        return root / "widgets"
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
    stored = run_record(db)["suite_info"]
    assert stored["nouns"] == "widgets"
    cli("report", "--db", str(db), "--out", str(db.parent / "again"))
    assert "### Widgets" in (db.parent / "again" / "summary.md").read_text()


def test_a_suite_that_does_not_declare_itself_is_refused(db, suites):
    # functions named as a suite's, without the declaration the worker reads
    suites("def list_cases():\n    return [('cog', 'float32', 'spin')]\n")
    result = cli("run", "--suite", "widgets", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "suite 'widgets' cannot list its cases: its suite.py defines no SUITE = suite_api.Suite(__name__, ...)" \
        in result.stderr
    assert recorded(db) == 0


def test_a_suite_folder_that_is_not_a_package_is_refused(db, suites):
    """Without its __init__.py, a suite's folder would be one part of a namespace package spread over
    every suites folder: a user's ops/ would mix its modules with ours."""
    (suites() / "__init__.py").unlink()
    result = cli("run", "--suite", "widgets", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "has no __init__.py: a suite folder is a regular package" in result.stderr


def test_a_case_whose_check_is_not_declared_is_refused(db, suites):
    suites(listed='("spin", "paint", "polish")')
    result = cli("run", "--suite", "widgets", "--db", str(db), check=False)
    assert result.returncode == 2
    assert "suite 'widgets' lists case widgets/cog/float32/polish whose check 'polish' it does not declare " \
           "(suite_api.check)" in result.stderr


THREADS = '''
import torch
import suite_api

SUITE = suite_api.Suite(__name__, share_cores=SHARE)
SUITE.makes_cases(suite_api.Case)


@suite_api.check("count", "counts the worker's intra-op threads")
def count(case):
    case.evidence["threads"] = torch.get_num_threads()


SUITE.lists(lambda: [("a", "-", "count"), ("b", "-", "count")])
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
        return {e["threads"] for e in evidences(db, "latest").values()}

    assert threads(False, "2") == {default}  # torch's own default pool
    assert threads(True, "2") == {max(1, (os.cpu_count() or 1) // 2)}  # online cores / jobs, as the harness counts
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a count the user set is kept
    assert threads(True, "1") == {1}


GEARS = '''
import suite_api

SETTINGS = {}
SUITE = suite_api.Suite(__name__, options={
    "teeth": {"type": "int", "default": 12, "help": "teeth per gear"},
    "oiled": {"type": "bool", "default": False, "help": "whether the gears are oiled"},
    "drawing": {"type": "path", "help": "where the gear's drawing is"}})
SUITE.makes_cases(suite_api.Case)


@SUITE.configures
def configure(options):
    if options["teeth"] < 3:
        raise ValueError(f"teeth {options['teeth']}: a gear needs at least 3")
    SETTINGS.update(options)


@suite_api.check("turn", "turns the gear")
def turn(case):
    case.evidence.update(options=SETTINGS, seed=case.ctx.seed)


SUITE.lists(lambda: [("gear", "-", "turn"), ("cog", "-", "turn")])
'''


def test_a_suite_outside_the_tree_declares_options_the_cli_parses_without_knowing_it(db, suites, tmp_path):
    """No C++ knows this suite or its options: it declares them, the worker types them, the run
    stores them resolved (a path made absolute), and the flag spelling is the same option."""
    suites(GEARS, listed='("turn",)')
    listed = cli("suites", "--json")
    gears = next(s for s in json.loads(listed.stdout) if s["suite"] == "widgets")
    assert gears["description"]["options"]["teeth"] == {"type": "int", "default": 12, "help": "teeth per gear"}
    assert "teeth per gear" in cli("suites").stdout

    cli("run", "--suite", "widgets", "--suite-option", "teeth=40", "--oiled", "--drawing", "gear.svg",
        "--db", str(db), "--reruns", "0", "-j", "1", cwd=tmp_path)
    [stored] = [r["suite_options"] for r in runs(db)]
    expected = {"teeth": 40, "oiled": True, "drawing": str(tmp_path / "gear.svg")}
    assert stored == expected
    evidence = {e["options"]["teeth"] for e in evidences(db).values()}
    assert evidence == {40}

    for args, says in [(["--suite-option", "teeth=many"], "option teeth takes an int: invalid literal"),
                       (["--teeth", "2"], "teeth 2: a gear needs at least 3"),
                       (["--colour", "red"], "the widgets suite has no option colour (it takes: drawing, oiled, teeth")]:
        result = cli("run", "--suite", "widgets", *args, "--db", str(db), check=False)
        assert result.returncode == 2 and says in result.stderr, result.stderr
    assert len(runs(db)) == 1  # refused before a run was recorded


def test_the_run_seed_reaches_every_case_and_its_repro(db, suites, tmp_path):
    """run --seed: the seed the suite's cases get (sample inputs are made with it), stored with the
    run, and the seed `repro` starts the case with."""
    suites(GEARS, listed='("turn",)')
    cli("run", "--suite", "widgets", "--seed", "41", "--db", str(db), "--reruns", "0", "-j", "1")
    assert [r["seed"] for r in runs(db)] == [41]
    assert {e["seed"] for e in evidences(db).values()} == {41}
    repro = cli("repro", "widgets/gear/-/turn", "--db", str(db))
    assert "--seed 41" in repro.stdout and '"seed": 41' in repro.stdout


def test_the_global_python_option_chooses_the_workers_interpreter(tmp_path):
    """--python: the interpreter every worker runs on (the installed launcher sets it to its own)."""
    listed = cli("--python", sys.executable, "suites", "--json")
    assert "widgets" not in listed.stdout and any(s["suite"] == "ops" for s in json.loads(listed.stdout))
    missing = tmp_path / "no-python"
    result = cli("--python", str(missing), "suites", "--json", check=False)
    assert result.returncode == 2 and f"the workers' Python {missing} is not an executable file" in result.stderr


LEAKY = '''
import torch
import suite_api
from sides import Verdict
from vocabulary import Outcome

SUITE = suite_api.Suite(__name__)
SUITE.makes_cases(suite_api.Case)


@suite_api.check("round", "rounds down on the device")
def round_down(case):
    x = torch.full((4,), 2.5, device=case.ctx.device)
    if torch.floor(x).cpu().tolist() != [2.0] * 4:
        raise Verdict(Outcome.FAIL, {})


SUITE.lists(lambda: [("gear", "-", "round")])
'''


def test_every_suite_is_held_to_the_resource_balance(db, suites):
    """The balance is the worker's, not a suite's: any suite's case that leaves device memory
    allocated on each run fails (defects_backend's floor keeps a buffer per call)."""
    suites(LEAKY)
    cli("run", "--suite", "widgets", "--backend-module", "defects_backend", "--db", str(db), "--reruns", "0")
    [result] = run_record(db)["results"]
    evidence = result["evidence"]
    assert result["outcome"] == "fail"
    assert evidence["property"] == "resource balance" and evidence["failing_op"] == "aten::floor"



def test_the_nightly_runs_what_each_suite_declares(suites):
    """ci/nightly.sh and the nightly workflow run `suites --nightly`'s list: every suite that does
    not opt out, with its declared shards and options, the biggest last; a suite's declaration is
    the only place that says so."""
    project = sorted(p.parent.name for p in (Path(__file__).parents[2] / "suites").glob("*/suite.py"))
    rows = [line.split(maxsplit=2) for line in cli("suites", "--nightly").stdout.splitlines()]
    listed = {row[0]: (int(row[1]), row[2] if len(row) > 2 else "") for row in rows}
    assert set(listed) == set(project) - {"upstream"}  # upstream needs a checkout: the script adds it
    assert listed["fuzz"] == (1, "--suite-option max_examples=200 --suite-option seconds_per_op=10.0")
    assert listed["ops"][0] == listed["compile"][0] == 2
    assert [int(row[1]) for row in rows] == sorted(int(row[1]) for row in rows)  # the biggest last

    # a suite outside the tree: its own shards and options, or left out
    suites(GEARS.replace("SUITE = suite_api.Suite(__name__, options={",
                         "SUITE = suite_api.Suite(__name__, nightly={'shards': 3, 'options': {'teeth': 40}}, options={"),
           listed='("turn",)')
    assert "widgets 3 --suite-option teeth=40" in cli("suites", "--nightly").stdout.splitlines()


def test_a_nightly_declaration_naming_an_undeclared_option_is_refused(suites):
    suites(GEARS.replace("SUITE = suite_api.Suite(__name__, options={",
                         "SUITE = suite_api.Suite(__name__, nightly={'options': {'colour': 'red'}}, options={"),
           listed='("turn",)')
    refused = cli("suites", "--nightly", check=False)
    assert refused.returncode == 1 and "widgets" in refused.stderr and "no option colour" in refused.stderr, \
        refused.stderr
