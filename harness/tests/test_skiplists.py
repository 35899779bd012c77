"""Skip lists in a run: skip never runs a case, xfail and xpass, --strict, expect, bad lists."""

import json
from pathlib import Path

from conform_cli import cli, evidences, outcomes, recorded

def slice_of(ops="^(sin|tan|add|mul)$"):
    return ["--suite", "ops", "--ops", ops, "--dtypes", "float32", "--checks", "forward", "--backend-module", "planted_backend",
            "--timeout", "20"]


def write(tmp_path, entries, name="list.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"entries": entries}, indent=2))
    return path


def test_skip_xfail_xpass_and_strict(tmp_path, db):
    lists = write(tmp_path, [
        {"suite": "ops", "subject": "sin", "mode": "skip", "category": "crash", "reason": "planted segfault"},
        {"suite": "ops", "subject": "tan", "mode": "xfail", "category": "precision", "reason": "planted wrong result",
         "expect": "fail"},
        {"suite": "ops", "subject": "add", "mode": "xfail", "category": "unsupported_op", "reason": "stale on purpose"},
    ])
    result = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db))
    assert outcomes(db) == {"ops/sin/float32/forward": "skip", "ops/tan/float32/forward": "xfail",
                            "ops/add/float32/forward": "xpass", "ops/mul/float32/forward": "pass"}
    skip = evidences(db)["ops/sin/float32/forward"]["skiplist"]
    assert skip["category"] == "crash" and skip["entry"].startswith(str(lists)) and skip["reason"] == "planted segfault"
    assert "workers:" in result.stdout and "crash(es)" in result.stdout
    assert "0 crash(es)" in result.stdout  # the skipped crash never ran
    assert "by skip-list category:" in result.stdout and "skip/crash 1" in result.stdout
    assert "ops/add/float32/forward passed unexpectedly" in result.stdout

    strict = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db), "--strict", check=False)
    assert strict.returncode == 1 and "--strict: 1 case(s) disagree" in strict.stderr


def test_strict_refuses_a_failure_no_entry_expects(tmp_path, db):
    """The planted crash and wrong result with no entry for them: --strict exits 1 and names them;
    once the lists expect them, it is content."""
    empty = write(tmp_path, [], name="empty.json")
    args = [*slice_of(), "--reruns", "0", "--db", str(db), "--strict"]
    refused = cli("run", *args, "--skiplists", str(empty), check=False)
    assert refused.returncode == 1
    assert "0 case(s) disagree with the skip lists, 2 failure(s) no entry expects" in refused.stderr
    assert "failures no skip-list entry expects (2):" in refused.stdout
    assert "ops/sin/float32/forward crash:" in refused.stdout and "ops/tan/float32/forward fail:" in refused.stdout

    expecting = write(tmp_path, [
        {"suite": "ops", "subject": "sin", "mode": "skip", "category": "crash", "reason": "planted segfault"},
        {"suite": "ops", "subject": "tan", "mode": "xfail", "category": "precision", "reason": "planted wrong result"},
    ], name="expecting.json")
    assert cli("run", *args, "--skiplists", str(expecting)).returncode == 0


def test_expect_mismatch_is_news(tmp_path, db):
    lists = write(tmp_path, [
        {"subject": "tan", "mode": "xfail", "category": "unsupported_op", "reason": "expects an error",
         "expect": {"outcome": "error", "message": "not supported"}},
    ])
    result = cli("run", *slice_of("^tan$"), "--skiplists", str(lists), "--db", str(db), "--strict", check=False)
    assert result.returncode == 1
    # a failure, but not the recorded one: a new failure behind the known one, never hidden as xfail
    assert outcomes(db) == {"ops/tan/float32/forward": "xfail_changed"}
    evidence = evidences(db)["ops/tan/float32/forward"]
    assert evidence["observed_outcome"] == "fail" and evidence["expectation_mismatch"]["expected_outcome"] == "error"
    assert "failed differently (xfail_changed): fail" in result.stdout
    stale = cli("skiplist", "stale", str(lists), "--db", str(db), check=False)
    assert stale.returncode == 1
    assert "its recorded failure no longer matches: 1 of 1 case(s) failed otherwise" in stale.stdout
    assert "1 whose recorded failure no longer matches" in stale.stdout


def test_a_bad_list_stops_the_run_before_any_case(tmp_path, db):
    lists = write(tmp_path, [{"subject": "add", "mode": "xfail", "category": "slow", "reason": ""}])
    result = cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db), check=False)
    assert result.returncode == 2
    assert f"{lists}:" in result.stderr and "unknown category 'slow'" in result.stderr
    assert "missing 'reason'" in result.stderr and "nothing was run" in result.stderr
    assert recorded(db) == 0
    assert cli("run", *slice_of("^mul$"), "--no-skiplists", "--skiplists", str(lists), "--db", str(db)).returncode == 0


def test_skiplist_subcommands_lint_stats_stale_update(tmp_path, db):
    lists = write(tmp_path, [
        {"suite": "ops", "subject": "add", "mode": "xfail", "category": "unsupported_op", "reason": "stale on purpose",
         "expect": "error"},
        {"suite": "ops", "subject": "erfinv", "dtype": "float64", "mode": "skip", "category": "dtype",
         "reason": "matches nothing in a float32 run"},
    ])
    assert cli("skiplist", "lint", str(lists)).stdout.splitlines() == [
        "subjects checked in 2 of 2 active entries (suites listed: ops)", "skip lists clean: 2 active entries"]
    bad = write(tmp_path, [{"suite": "ops", "subject": "not_an_op", "mode": "skip", "category": "dtype", "reason": "x"}],
                name="bad.json")
    linted = cli("skiplist", "lint", str(bad), check=False)
    assert linted.returncode == 1 and "subject 'not_an_op' names no case of suite 'ops'" in linted.stdout
    assert f"{bad}:3:5:" in linted.stdout
    # an xfail entry that records no failure would hide any other behind it
    shapeless = write(tmp_path, [{"suite": "ops", "subject": "add", "mode": "xfail", "category": "precision",
                                  "reason": "x"}], name="shapeless.json")
    linted = cli("skiplist", "lint", str(shapeless), check=False)
    assert linted.returncode == 1 and "an xfail entry without 'expect' accepts any failure" in linted.stdout

    cli("run", *slice_of(), "--skiplists", str(lists), "--db", str(db))
    stats = cli("skiplist", "stats", str(lists), "--db", str(db)).stdout
    assert "unsupported_op/xfail" in stats and "decided by an entry: 1 of 4 planned" in stats
    stale = cli("skiplist", "stale", str(lists), "--db", str(db), check=False)
    assert stale.returncode == 1
    assert "all 1 case(s) passed (xpass)" in stale.stdout and "matched no case of the run" in stale.stdout

    proposal_path = tmp_path / "proposal.json"
    cli("skiplist", "update", str(lists), "--db", str(db), "-o", str(proposal_path))
    proposal = json.loads(proposal_path.read_text())
    assert {r["why"] for r in proposal["remove"]} == {"all 1 case(s) passed (xpass)", "matched no case of the run"}
    added = {a["subject"]: a for a in proposal["add"]}
    assert set(added) == {"sin", "tan"}  # the planted crash and the planted wrong result
    assert added["sin"]["mode"] == "skip" and added["sin"]["category"] == "crash"
    # the failure it records: the outcome and the start of the message's first line
    assert added["tan"]["expect"]["outcome"] == "fail" and added["tan"]["reason"].startswith("EDIT ME")
    assert added["tan"]["expect"]["message"] and "\n" not in added["tan"]["expect"]["message"]
    # applying the proposal by hand, then rerunning, leaves nothing to update
    entries = [e for e in json.loads(lists.read_text())["entries"] if e["subject"] not in ("add", "erfinv")]
    entries += [{**a, "reason": "reviewed: planted fault"} for a in proposal["add"]]
    applied = write(tmp_path, entries, name="applied.json")
    cli("run", *slice_of(), "--skiplists", str(applied), "--db", str(db), "--strict")
    cli("skiplist", "update", str(applied), "--db", str(db), "-o", str(proposal_path))
    assert json.loads(proposal_path.read_text())["remove"] == [] and json.loads(proposal_path.read_text())["add"] == []


def test_lint_checks_subjects_in_every_suite_an_entry_names(tmp_path):
    """Not only --suite's entries: each suite an entry names is listed once; one that needs a run's
    options (upstream: a PyTorch checkout) is said to be unchecked, a suite that does not exist is
    a problem."""
    lists = write(tmp_path, [
        {"suite": "optim", "subject": "Adamm", "mode": "skip", "category": "dtype", "reason": "misspelt"},
        {"suite": ["ops", "optim"], "subject": ["add", "not_an_op"], "mode": "skip", "category": "dtype",
         "reason": "one subject misspelt"},
        {"suite": "upstream", "subject": "test_torch", "mode": "skip", "category": "dtype", "reason": "unlisted"},
        {"suite": "opz", "mode": "skip", "category": "dtype", "reason": "no such suite"},
    ])
    linted = cli("skiplist", "lint", str(lists), check=False)
    assert linted.returncode == 1, linted.stdout
    lines = linted.stdout.splitlines()
    assert f"{lists}:3:5: subject 'Adamm' names no case of suite 'optim' in torch" in linted.stdout
    assert f"{lists}:10:5: subject 'not_an_op' names no case of suites 'ops', 'optim' in torch" in linted.stdout
    assert not any("'add'" in line for line in lines)
    assert f"{lists}:30:5: suite 'opz' is no suite" in linted.stdout
    assert any(line.startswith("suite 'upstream': the subjects of 1 entry is not checked: ") for line in lines)
    assert "subjects checked in 2 of 4 active entries (suites listed: ops, optim)" in lines
    assert "neuron-conform: skiplist lint: 3 problem(s)" in linted.stderr


def test_the_shipped_lists_lint_clean_and_decide_real_cases(db):
    """The bundled backend's lists: clean against the installed torch, one file per category."""
    linted = cli("skiplist", "lint")
    assert linted.stdout.splitlines()[-1].startswith("skip lists clean:")
    # facts.json (read, then checked to change something by 7 checks: samples' two, placements', the
    # random and layout checks', the fuzz suite's two), tiny_models.json (two readers), most_used.json,
    # models.json, donors.json
    assert "reviewed documents of the suites read: 13 reader(s)" in linted.stdout
    # A slice the lists cover: complex add is refused by the device and expected to fail so.
    cli("run", "--suite", "ops", "--ops", "^(add|sub)$", "--dtypes", "complex64,float32", "--checks", "forward", "--strict",
        "--db", str(db), "--timeout", "60")
    assert outcomes(db) == {"ops/add/complex64/forward": "xfail", "ops/add/float32/forward": "pass",
                            "ops/sub/complex64/forward": "xfail", "ops/sub/float32/forward": "pass"}
    evidence = evidences(db)["ops/add/complex64/forward"]
    assert evidence["skiplist"]["category"] == "dtype" and "dtypes.json" in evidence["skiplist"]["entry"]


def test_lint_and_stale_read_every_reviewed_document_a_suite_declares(tmp_path, db):
    """A suite's reviewed data (a table it ships, read through suitelib.reviewed) is linted with the
    skip lists, and `stale` of a run of the suite reports it too: a wrong entry is a problem naming
    the suite, the file, the entry and its line."""
    suite = tmp_path / "tabled"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "table.json").write_text('{"rows": {\n  "good": 1,\n  "bad": -1\n}}\n')
    (suite / "suite.py").write_text(
        "from functools import cache\nfrom pathlib import Path\n\nimport suite_api\nfrom suitelib import reviewed\n\n"
        "SUITE = suite_api.Suite(__name__)\nSUITE.makes_cases(suite_api.Case)\n\n\n"
        "@reviewed.document\n@cache\ndef rows():\n"
        "    return reviewed.read(Path(__file__).with_name('table.json'), {'rows': reviewed.Field(\n"
        "        dict, entries=lambda name, n: None if n >= 0 else 'a count is never negative')})\n\n\n"
        "@suite_api.check('count', 'counts the rows')\ndef count(case):\n    case.evidence['rows'] = 1\n\n\n"
        "SUITE.lists(lambda: [('table', '-', 'count')])\n")
    env = {"NEURON_CONFORM_SUITES": str(tmp_path)}
    says = f"{suite / 'table.json'}: bad: a count is never negative (line 3)"
    linted = cli("skiplist", "lint", "--no-subject-check", check=False, env=env)
    assert linted.returncode == 1, linted.stdout
    assert f"suite 'tabled': {says}" in linted.stdout
    cli("run", "--suite", "tabled", "--db", str(db), "--reruns", "0", "-j", "1", env=env)
    stale = cli("skiplist", "stale", "--db", str(db), check=False, env=env)
    assert stale.returncode == 1 and f"suite 'tabled': reviewed document: {says}" in stale.stdout, stale.stdout
    assert "1 problem(s) in the suites' reviewed documents" in stale.stdout


def test_stale_names_entries_that_are_the_harness_problem(db):
    # bernoulli's extremal samples (NaN planted in its probabilities) are refused by the CPU itself:
    # the shipped entry that expects the case to fail hides a problem of the CPU reference, not of
    # the backend, and `stale` says so.
    cli("run", "--ops", "^bernoulli$", "--dtypes", "float32", "--checks", "extremal", "--reruns", "0",
        "--db", str(db))
    stale = cli("skiplist", "stale", "--db", str(db), check=False)
    assert stale.returncode == 1
    owned = [line for line in stale.stdout.splitlines() if "the harness's, not the backend's" in line]
    assert len(owned) == 1 and "no sample input produced a CPU reference" in owned[0], stale.stdout


def test_export_for_pytorch_round_trips_the_shipped_lists(tmp_path):
    configs = tmp_path / "configs.py"
    said = cli("skiplist", "export", "--format", "pytorch", "-o", str(configs)).stdout
    assert "op_overrides" in said and "test_exclusions" in said
    text = configs.read_text()
    assert "PrivateUse1TestBase.set_test_configs(op_overrides=op_overrides, test_exclusions=test_exclusions)" in text
    assert "DecorateInfo(unittest.expectedFailure, 'TestCommon', 'test_compare_cpu'" in text
    back = tmp_path / "back.json"
    cli("skiplist", "import", str(configs), "-o", str(back))
    again = tmp_path / "again.py"
    cli("skiplist", "export", str(back), "-o", str(again))

    def entries(module: Path) -> list:
        import ast

        tree = ast.parse(module.read_text())
        call = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                    and node.targets[0].id == "NEURON_CONFORM_ENTRIES")
        return json.loads(ast.literal_eval(call.args[0]))

    first = entries(configs)
    assert len(first) > 100 and entries(again) == first  # every field of every entry survives
    assert cli("skiplist", "lint", str(back), "--no-subject-check").returncode == 0


def test_import_reads_a_module_written_by_hand(tmp_path):
    configs = tmp_path / "hand.py"
    configs.write_text(
        "import unittest\nimport torch\n"
        "from torch.testing._internal.common_device_type import PrivateUse1TestBase, tol, toleranceOverride\n"
        "from torch.testing._internal.opinfo.core import DecorateInfo\n"
        "PrivateUse1TestBase.set_test_configs(\n"
        "    op_overrides={'add': [DecorateInfo(unittest.skip('x'), 'TestCommon', 'test_compare_cpu',\n"
        "                                       dtypes=(torch.bfloat16,)),\n"
        "                          DecorateInfo(toleranceOverride({torch.float16: tol(atol=1e-3, rtol=1e-2)}),\n"
        "                                       'TestCommon', 'test_compare_cpu'),\n"
        "                          DecorateInfo(unittest.expectedFailure, 'TestBwdGradients', 'test_fn_grad')]},\n"
        "    test_exclusions={'TestViewOps': ['test_view_as_real']})\n")
    out = tmp_path / "hand.json"
    cli("skiplist", "import", str(configs), "-o", str(out))
    got = json.loads(out.read_text())["entries"]
    assert {(e["suite"], e["subject"] if isinstance(e["subject"], str) else tuple(e["subject"]),
             e["check"] if isinstance(e["check"], str) else tuple(e["check"]), e["mode"]) for e in got} == {
        ("ops", "add", "forward", "skip"), ("ops", "add", "backward", "xfail"), ("ops", "add", "forward", "tolerance"),
        ("upstream", "*", ("test_view_as_real",), "skip")}
    assert next(e for e in got if e["mode"] == "skip" and e["suite"] == "ops")["dtype"] == ["bfloat16"]
    tolerance = next(e for e in got if e["mode"] == "tolerance")
    assert (tolerance["dtype"], tolerance["rtol"], tolerance["atol"]) == ("float16", 1e-2, 1e-3)
    broken = tmp_path / "broken.py"
    broken.write_text("x = (\n")
    result = cli("skiplist", "import", str(broken), check=False)
    assert result.returncode == 2 and "SyntaxError" in result.stderr


def test_a_tolerance_entry_is_the_reviewed_tolerance_of_the_cases_it_matches(tmp_path, db):
    """log2's planted kernel is 1.2 % off at bfloat16: judged three ways against a float64
    reference it fails; a reviewed tolerance entry (rtol 2 %) matches it, and the evidence names
    the entry; repro compares with the tolerance the run gave; an entry for another dtype changes
    nothing."""
    common = ("run", "--suite", "ops", "--ops", "^log2$", "--dtypes", "bfloat16,float32", "--checks", "forward",
              "--backend-module", "defects_backend", "--reruns", "0", "--db", str(db))
    planted = {"DEFECTS_CLASSES": "loses_bits"}
    entry = {"suite": "ops", "subject": "log2", "dtype": "bfloat16", "mode": "tolerance", "category": "precision",
             "rtol": 0.02, "reason": "the kernel keeps fewer terms"}
    cli(*common, "--skiplists", str(write(tmp_path, [{**entry, "dtype": "float16"}])), env=planted)
    assert outcomes(db)["ops/log2/bfloat16/forward"] == "fail"
    assert "tolerance_given" not in evidences(db)["ops/log2/bfloat16/forward"]

    lists = write(tmp_path, [entry], "reviewed.json")
    said = cli(*common, "--skiplists", str(lists), env=planted)
    assert "1 compared with a reviewed tolerance" in said.stderr
    got, evidence = outcomes(db), evidences(db)
    # matched (the planted kernel computes on the host: host_only, not a failure)
    assert got == {"ops/log2/bfloat16/forward": "host_only", "ops/log2/float32/forward": "host_only"}, got
    reviewed = evidence["ops/log2/bfloat16/forward"]
    assert reviewed["rtol"] == 0.02 and reviewed["tolerance_source"].startswith(f"{lists}:")
    assert reviewed["tolerance_given"]["applied"] is True
    assert str(lists) not in evidence["ops/log2/float32/forward"]["tolerance_source"]  # upstream's
    assert "tolerance_given" not in evidence["ops/log2/float32/forward"]

    replay = cli("repro", "ops/log2/bfloat16/forward", "--db", str(db), env=planted, check=False)
    assert "--tolerance" in replay.stdout and '"outcome": "host_only"' in replay.stdout, replay.stdout

    stale = cli("skiplist", "stale", str(write(tmp_path, [entry, {**entry, "subject": "exp"}], "two.json")),
                "--db", str(db), check=False)
    assert "matched no case of the run" in stale.stdout and stale.stdout.count(": stale:") == 1, stale.stdout


def test_a_tolerance_entry_exports_as_upstreams_tolerance_override(tmp_path):
    lists = write(tmp_path, [{"suite": "ops", "subject": "log2", "dtype": ["bfloat16", "float16"],
                              "check": "forward", "mode": "tolerance", "category": "precision", "rtol": 0.02,
                              "atol": 0.001, "reason": "fewer terms"}])
    configs = tmp_path / "configs.py"
    cli("skiplist", "export", str(lists), "-o", str(configs))
    assert ("DecorateInfo(toleranceOverride({torch.bfloat16: tol(atol=0.001, rtol=0.02), torch.float16: "
            "tol(atol=0.001, rtol=0.02)}), 'TestCommon', 'test_compare_cpu', dtypes=None)") in configs.read_text()
    back = tmp_path / "back.json"
    cli("skiplist", "import", str(configs), "-o", str(back))  # the module runs: PyTorch takes the decorator
    assert json.loads(back.read_text())["entries"] == json.loads(lists.read_text())["entries"]
