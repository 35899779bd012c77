"""The suite API every suite uses (harness/worker/suite_api.py): case ids, declared options, and
suites imported as one package whose private modules are not global names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conform_cli import REPO

sys.path.insert(0, str(REPO / "harness" / "worker"))
import suite_api  # noqa: E402


def test_case_ids_are_parsed_and_listed_one_way():
    parsed = suite_api.parse("ops/nn.functional.pad.constant/float32/forward", "ops", ["forward", "out"])
    assert parsed == ("ops", "nn.functional.pad.constant", "float32", "forward")
    assert str(parsed) == "ops/nn.functional.pad.constant/float32/forward"
    assert list(suite_api.cases("ops", [("add", "int8", "out")])) == [
        {"id": "ops/add/int8/out", "suite": "ops", "subject": "add", "dtype": "int8", "check": "out"}]
    for case_id, says in [("ops/add/float32", "a case id is <suite>/<subject>/<dtype>/<check>"),
                          ("ops/add//forward", "a case id is"),
                          ("hf/add/float32/forward", "not a case of the ops suite"),
                          ("ops/add/float32/sideways", "the ops suite has no check 'sideways'")]:
        with pytest.raises(KeyError, match=says):
            suite_api.parse(case_id, "ops", ["forward", "out"])
    assert suite_api.parse("upstream/f.T/-/test_x", "upstream", None).check == "test_x"  # the suite checks it


DECLARED = {
    "size": {"type": "int", "default": 2, "help": "h"},
    "ratio": {"type": "float", "default": 0.5, "help": "h"},
    "on": {"type": "bool", "default": False, "help": "h"},
    "name": {"type": "str", "help": "h"},
    "dir": {"type": "path", "help": "h", "required": True},
}


def test_options_are_typed_defaulted_and_refused_by_their_declaration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    resolved = suite_api.resolve_options("s", DECLARED, {"size": "7", "on": "yes", "dir": "here"})
    assert resolved == {"size": 7, "ratio": 0.5, "on": True, "name": None, "dir": str(tmp_path / "here")}
    # what a run stored (typed, nulls included) resolves to itself: --resume configures alike
    assert suite_api.resolve_options("s", DECLARED, json.loads(json.dumps(resolved))) == resolved
    for given, says in [({"dir": "d", "colour": "red"}, "the s suite has no option colour"),
                        ({"dir": "d", "size": "2.5"}, "option size takes an int"),
                        ({"dir": "d", "on": "perhaps"}, "'perhaps' is not a boolean"),
                        ({}, "the s suite needs the option dir")]:
        with pytest.raises(ValueError, match=says):
            suite_api.resolve_options("s", DECLARED, given)


def test_every_suite_loads_as_one_package_and_leaks_no_module_name():
    """A suite's own modules (ops_inputs, models, cases, world, sizes_calls, ...) are
    neuron_conform_suites.<suite>.<module>, never top-level names another suite's could shadow."""
    script = f"""
import json, sys
sys.path.insert(0, {str(REPO / "harness" / "worker")!r})
import torch_neuronsim, suite_api
found = suite_api.find_suites()
for name in found:
    suite_api.load_suite(name)
print(json.dumps({{"found": sorted(found), "modules": sorted(m for m in sys.modules if "." not in m)}}))
"""
    out = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                    cwd=REPO).stdout.splitlines()[-1])
    assert {"ops", "hf", "compile", "aten", "modules", "optim", "sizes", "distributed", "upstream"} <= set(out["found"])
    own = {path.stem for suite in out["found"] for path in (REPO / "suites" / suite).glob("*.py")}
    assert own & set(out["modules"]) == set(), "suite modules imported as global names"
