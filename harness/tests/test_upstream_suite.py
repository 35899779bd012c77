"""The upstream suite end to end, on a device-generic test file in upstream's style
(data/upstream/test/test_neuron_generic.py; its docstring lists what is planted)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from conform_cli import UPSTREAM_CHECKOUT as CHECKOUT, cli, evidences, outcomes, recorded, run_record

GENERIC = "upstream/test_neuron_generic.TestGeneric"


def _checkout(tmp_path: Path, version: str | None) -> Path:
    """A copy of the bundled checkout whose version.txt says `version` (None: no version.txt)."""
    root = tmp_path / "pytorch"
    shutil.copytree(CHECKOUT, root)
    if version is not None:
        (root / "version.txt").write_text(version + "\n")
    return root


def test_each_planted_test_is_recorded_with_its_outcome(db, tmp_path):
    root = _checkout(tmp_path, torch.__version__.split("+")[0])
    cli("run", "--suite", "upstream", "--pytorch-test-dir", str(root), "--no-skiplists", "--reruns", "0",
        "-j", "2", "--timeout", "120", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    assert got == {
        f"{GENERIC}/float32/test_add": "pass",
        f"{GENERIC}/int64/test_add": "pass",
        f"{GENERIC}/-/test_device_type": "pass",
        f"{GENERIC}/-/test_parametrized_n_1": "pass",
        f"{GENERIC}/-/test_parametrized_n_4": "pass",
        f"{GENERIC}/float32/test_op_neg": "pass",
        f"{GENERIC}/float32/test_erfinv": "fallback",
        f"{GENERIC}/float32/test_planted_failure": "fail",
        f"{GENERIC}/-/test_planted_error": "error",
        f"{GENERIC}/float32/test_planted_crash": "crash",
        f"{GENERIC}/-/test_cuda_only": "skip",
        f"{GENERIC}/-/test_skips_itself": "skip",
        # the file that cannot be imported is one case; the other file ran
        "upstream/test_import_error/-/import": "error",
    }
    failure = evidence[f"{GENERIC}/float32/test_planted_failure"]
    assert "planted: three ones do not sum to four" in failure["message"]
    assert failure["test"] == "TestGenericNEURON.test_planted_failure_neuron_float32"
    assert evidence[f"{GENERIC}/-/test_planted_error"]["exception_type"] == "RuntimeError"
    assert evidence[f"{GENERIC}/float32/test_planted_crash"]["signal_name"] == "SIGSEGV"
    assert evidence[f"{GENERIC}/-/test_cuda_only"]["message"] == "Only runs on cuda"
    assert evidence[f"{GENERIC}/-/test_skips_itself"]["suite_skip"] is True
    imported = evidence["upstream/test_import_error/-/import"]
    assert imported["exception_type"] == "ModuleNotFoundError"
    assert "neuron_conform_no_such_module" in imported["message"]
    # the run remembers its options, so resume and repro start workers the same way
    assert run_record(db)["suite_options"] == {"pytorch_test_dir": str(root), "test_files": "",  # resolved: defaults too
                                      "pytorch_configs": None}
    repro = cli("repro", f"{GENERIC}/float32/test_add", "--db", str(db), "--print-only")
    assert "--suite-options" in repro.stdout and str(root) in repro.stdout


def test_skip_list_entries_match_upstream_cases_exactly(db, tmp_path):
    skiplist = tmp_path / "upstream.json"
    skiplist.write_text(json.dumps({"version": 1, "entries": [
        {"suite": "upstream", "subject": "test_neuron_generic.TestGeneric", "dtype": "float32",
         "check": "test_planted_failure", "mode": "xfail", "category": "precision",
         "reason": "planted failure"},
        # a prefix of a check is not a match, whatever a substring would say
        {"suite": "upstream", "subject": "test_neuron_generic.TestGeneric", "dtype": "*",
         "check": "test_planted", "mode": "skip", "category": "crash", "reason": "prefix, matches nothing"},
    ]}))
    cli("run", "--suite", "upstream", "--pytorch-test-dir", str(CHECKOUT), "--test-files", "test_neuron_generic",
        "--ops", "TestGeneric", "--checks", "test_planted_failure,test_add", "--skiplists", str(skiplist),
        "--reruns", "0", "-j", "1", "--db", str(db))
    assert outcomes(db) == {f"{GENERIC}/float32/test_planted_failure": "xfail",
                            f"{GENERIC}/float32/test_add": "pass", f"{GENERIC}/int64/test_add": "pass"}


@pytest.mark.parametrize("problem, expected", [
    ("missing", "nowhere: no such directory"),
    ("no tests", "holds no test/test_*.py files"),
    ("other version", "says 2.1.0, but the installed torch is"),
    ("unknown file", "test_nothing_here is not a file of"),
    ("no dir", "the upstream suite needs the option pytorch_test_dir"),
])
def test_bad_checkouts_are_refused_before_any_case_runs(db, tmp_path, problem, expected):
    args = ["run", "--suite", "upstream", "--db", str(db)]
    if problem == "missing":
        args += ["--pytorch-test-dir", str(tmp_path / "nowhere")]
    elif problem == "no tests":
        (tmp_path / "empty" / "test").mkdir(parents=True)
        args += ["--pytorch-test-dir", str(tmp_path / "empty")]
    elif problem == "other version":
        args += ["--pytorch-test-dir", str(_checkout(tmp_path, "2.1.0"))]
    elif problem == "unknown file":
        args += ["--pytorch-test-dir", str(CHECKOUT), "--test-files", "test_neuron_generic.py,test_nothing_here"]
    result = cli(*args, check=False)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # one line (after "listing suite ...")
    assert recorded(db) == 0


def test_other_suites_take_no_suite_options(db):
    result = cli("run", "--suite", "optim", "--pytorch-test-dir", str(CHECKOUT), "--db", str(db), check=False)
    assert result.returncode == 2
    assert "the optim suite has no option pytorch_test_dir (it takes: none" in result.stderr


# Hash seeds under which the fixture's @ops test is instantiated first (10) and not first (3):
# upstream binds an @ops test's device type before its first setUpClass, so under seed 10 the
# op_overrides applied only when the suite had set the device type up itself.
@pytest.mark.parametrize("hash_seed", ["10", "3"])
def test_a_pytorch_configs_module_applies_as_run_test_would(db, tmp_path, monkeypatch, hash_seed):
    # What `skiplist export --format pytorch` writes: op_overrides skip one OpInfo test, and
    # test_exclusions leave a generic test out; the suite imports it before the test files.
    monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
    configs = tmp_path / "configs.py"
    configs.write_text(
        "import unittest\nimport torch\n"
        "from torch.testing._internal.common_device_type import PrivateUse1TestBase\n"
        "from torch.testing._internal.opinfo.core import DecorateInfo\n"
        "PrivateUse1TestBase.set_test_configs(\n"
        "    op_overrides={'neg': [DecorateInfo(unittest.skip('planted: neg is skipped'), 'TestGeneric', 'test_op',\n"
        "                                       dtypes=(torch.float32,))]},\n"
        "    test_exclusions={'TestGeneric': ['test_device_type']})\n")
    root = _checkout(tmp_path, None)
    cli("run", "--suite", "upstream", "--pytorch-test-dir", str(root), "--test-files", "test_neuron_generic.py",
        "--suite-option", f"pytorch_configs={configs}", "--no-skiplists", "--reruns", "0", "--timeout", "120",
        "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    assert f"{GENERIC}/-/test_device_type" not in got  # excluded: never instantiated
    assert got[f"{GENERIC}/float32/test_op_neg"] == "skip"
    assert "planted: neg is skipped" in json.dumps(evidence[f"{GENERIC}/float32/test_op_neg"])
    assert got[f"{GENERIC}/float32/test_add"] == "pass"
    bad = cli("run", "--suite", "upstream", "--pytorch-test-dir", str(root), "--suite-option",
              f"pytorch_configs={tmp_path / 'missing.py'}", "--db", str(db), check=False)
    assert bad.returncode == 2 and "pytorch_configs" in bad.stderr and "no such file" in bad.stderr
