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


def _declared_in(module: str):
    """check() for a function declared in `module` (as if written in that suite's file)."""
    def declare(name, description, **kwargs):
        def register(run):
            run.__module__ = module
            return suite_api.check(name, description, **kwargs)(run)
        return register
    return declare


def widgets() -> suite_api.Suite:
    """A suite declared as a suite.py declares one: two checks, one applying to cogs only."""
    from sides import Verdict

    suite = suite_api.Suite("neuron_conform_suites.widgets.suite", noun="widget",
                            native_phrase=lambda: "turn natively")
    suite.makes_cases(suite_api.Case)
    check = _declared_in("neuron_conform_suites.widgets.suite_checks")
    suite_api._CHECKS.pop("widgets", None)

    def dull(case):
        raise Verdict("fail", {"message": "dull"})

    check("turn", "turns once")(lambda case: case.evidence.update(turned=case.id.subject))
    check("polish", "shines", applies=lambda subject: subject == "cog", native=False, api=False, cloth="felt")(dull)
    suite.lists(lambda: ((s, "-", c) for s in ("cog", "gear") for c in suite.checks_for(s)))
    return suite


def test_a_check_declared_once_gives_the_listing_description_and_dispatch():
    suite = widgets()
    assert suite.name == "widgets"  # from the module's folder, never passed as a string
    assert [c["id"] for c in suite.list_cases()] == ["widgets/cog/-/turn", "widgets/cog/-/polish",
                                                     "widgets/gear/-/turn"]
    assert suite.describe() == {"noun": "widget", "native_phrase": "turn natively", "native_checks": ["turn"],
                                "checks": {"turn": "turns once", "polish": "shines"}}
    assert suite.api_checks() == ["turn"]
    assert suite.checks["polish"].traits == {"cloth": "felt"}
    assert suite.run_case("widgets/gear/-/turn", None) == ("pass", {"turned": "gear"})
    assert suite.run_case("widgets/cog/-/polish", None)[0] == "fail"
    with pytest.raises(ValueError, match="check 'turn' is declared twice"):
        _declared_in("neuron_conform_suites.widgets.other")("turn", "again")(lambda: None)
    with pytest.raises(ValueError, match="not a module of a suite"):
        suite_api.check("spin", "spins")(lambda: None)  # declared outside any suite's package


def test_a_suite_skips_one_way_whether_a_requirement_is_missing_or_a_check_says_so():
    """`requires=` on a check and `Skip` raised anywhere in a case both end in suite_skip(): a skip
    flagged suite_skip, with the reason, and the runner not called for a missing requirement."""
    suite = widgets()
    check = _declared_in("neuron_conform_suites.widgets.suite_checks")
    ran: list[str] = []

    def needs_oil(case):
        ran.append(case.id.subject)

    def rusted(case):
        raise suite_api.Skip("rusted shut", rust="red")

    check("oil", "oils", requires=lambda ctx: None if ctx == "oiled" else "the backend has no oil")(needs_oil)
    check("open", "opens")(rusted)
    assert suite.run_case("widgets/cog/-/oil", "dry") == ("skip", {"message": "the backend has no oil",
                                                                   "suite_skip": True})
    assert ran == []
    assert suite.run_case("widgets/cog/-/oil", "oiled") == ("pass", {}) and ran == ["cog"]
    assert suite.run_case("widgets/cog/-/open", None) == ("skip", {"message": "rusted shut", "rust": "red",
                                                                   "suite_skip": True})


def test_every_check_runs_one_way_on_the_case_its_suite_makes_from_the_id():
    """@SUITE.makes_cases: the registry parses the id once and makes the suite's case; a check is
    run(case) -> None, passing by returning and failing by raising a Verdict (a Stage is an error at
    that stage); a check found at run time runs through runs_found; an unknown subject is the
    case factory's KeyError."""
    from sides import Stage, Verdict

    class Cog(suite_api.Case):
        def __init__(self, case_id, ctx):
            if case_id.subject not in ("cog", "gear"):
                raise suite_api.unknown(case_id, "such widget")
            super().__init__(case_id, ctx)
            self.teeth = 12 if case_id.subject == "cog" else 30

        def conclude(self):
            self.evidence["teeth"] = self.teeth
            return super().conclude()

    suite = suite_api.Suite("neuron_conform_suites.widgets.suite")
    suite.makes_cases(Cog)
    suite_api._CHECKS.pop("widgets", None)
    check = _declared_in("neuron_conform_suites.widgets.suite_checks")

    def count(case):
        if case.teeth > 20:
            raise Verdict("fail", {"message": f"{case.teeth} teeth"})
        case.evidence["counted"] = case.teeth

    def grind(case):
        raise Stage("device", RuntimeError("stripped"))

    check("count", "counts teeth")(count)
    check("grind", "grinds")(grind)
    assert suite.run_case("widgets/cog/-/count", None) == ("pass", {"counted": 12, "teeth": 12})
    assert suite.run_case("widgets/gear/-/count", None) == ("fail", {"message": "30 teeth"})
    outcome, evidence = suite.run_case("widgets/cog/-/grind", None)
    assert outcome == "error" and evidence["stage"] == "device" and "stripped" in evidence["message"]
    with pytest.raises(KeyError, match="no such widget"):
        suite.run_case("widgets/bolt/-/count", None)
    suite.finds_checks(lambda: {"spin3": "spins three times"})
    with pytest.raises(ValueError, match="registers no @SUITE.runs_found"):
        suite.run_case("widgets/cog/-/spin3", None)
    suite.runs_found(lambda case: case.evidence.update(spun=int(case.id.check[-1])))
    assert suite.run_case("widgets/cog/-/spin3", None) == ("pass", {"spun": 3, "teeth": 12})


def test_case_ids_are_parsed_and_listed_one_way():
    suite = widgets()
    parsed = suite.parse("widgets/nn.functional.pad.constant/float32/turn")
    assert parsed == ("widgets", "nn.functional.pad.constant", "float32", "turn")
    assert str(parsed) == "widgets/nn.functional.pad.constant/float32/turn"
    assert parsed.listed() == {"id": str(parsed), "suite": "widgets", "subject": "nn.functional.pad.constant",
                               "dtype": "float32", "check": "turn"}
    for case_id, says in [("widgets/add/float32", "a case id is <suite>/<subject>/<dtype>/<check>"),
                          ("widgets/add//turn", "a case id is"),
                          ("hf/add/float32/turn", "not a case of the widgets suite"),
                          ("widgets/add/float32/sideways", "the widgets suite has no check 'sideways'")]:
        with pytest.raises(KeyError, match=says):
            suite.parse(case_id)
    suite.finds_checks(lambda: {"test_x": "found at run time"})  # upstream's test names: the runner checks them
    assert suite.parse("widgets/f.T/-/test_x").check == "test_x"
    assert suite.describe()["checks"] == {"turn": "turns once", "polish": "shines", "test_x": "found at run time"}


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
    """A suite's own modules (ops_layout, tables, cases, world, sizes_calls, ...) are
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
