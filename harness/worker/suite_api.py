"""What every suite shares (suites/README.md describes the API): where suites are found and how
they are imported, case ids, the options a suite declares, the device under test, and the
conclusions every suite reaches the same way.

Suites are imported as the package `neuron_conform_suites`, whose folders are those of
NEURON_CONFORM_SUITES (os.pathsep-separated, first wins) and then the project's suites/: the ops
suite is `neuron_conform_suites.ops.suite`, its modules `neuron_conform_suites.ops.<module>`.
A suite imports its own modules package-relatively (`from . import models`) and another suite's
by name (`from neuron_conform_suites.ops import opinfo_runs`), so no suite's module is a global
name another suite's could shadow.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Iterator, NamedTuple

from evidence import dtype_name
from vocabulary import Outcome, Where

PACKAGE = "neuron_conform_suites"
DEFAULT_SUITE = "ops"  # what `run` runs without --suite: PyTorch's operator suite
PROJECT_SUITES = Path(__file__).resolve().parents[2] / "suites"


def suite_dirs() -> list[Path]:
    """The folders holding suites (<name>/suite.py), in the order they are searched."""
    extra = [Path(p).resolve() for p in os.environ.get("NEURON_CONFORM_SUITES", "").split(os.pathsep) if p]
    return extra + [PROJECT_SUITES]


def package() -> ModuleType:
    """The package the suites are imported under (made once per process)."""
    module = sys.modules.get(PACKAGE)
    if module is None:
        module = ModuleType(PACKAGE, "the suites neuron-conform runs, one subpackage each")
        module.__path__ = [str(d) for d in suite_dirs()]
        sys.modules[PACKAGE] = module
    return module


def find_suites() -> dict[str, Path]:
    """Every suite found, by name: its folder (the first folder holding a suite of that name)."""
    found: dict[str, Path] = {}
    for folder in suite_dirs():
        for suite in sorted(folder.glob("*/suite.py")) if folder.is_dir() else ():
            found.setdefault(suite.parent.name, suite.parent)
    return dict(sorted(found.items()))


def load_suite(name: str) -> ModuleType:
    """The suite's module (`<name>/suite.py`); SystemExit naming the folders searched when there is
    none."""
    if not name.isidentifier() or name not in find_suites():
        raise SystemExit(f"unknown suite '{name}': no {name}/suite.py in {', '.join(map(str, suite_dirs()))}")
    package()
    return importlib.import_module(f"{PACKAGE}.{name}.suite")


# --- case ids ------------------------------------------------------------------------------

class CaseId(NamedTuple):
    """<suite>/<subject>/<dtype>/<check>: a case's stable name."""

    suite: str
    subject: str
    dtype: str
    check: str

    def __str__(self) -> str:
        return "/".join(self)

    def listed(self) -> dict[str, str]:
        """The case as list_cases() yields it."""
        return {"id": str(self), **self._asdict()}


def cases(suite: str, rows: Iterable[tuple[str, str, str]]) -> Iterator[dict[str, str]]:
    """list_cases() of a suite from its (subject, dtype, check) rows."""
    for subject, dtype, check in rows:
        yield CaseId(suite, subject, dtype, check).listed()


def parse(case_id: str, suite: str, checks: Iterable[str] | None) -> CaseId:
    """The case id's fields; KeyError naming what is wrong when it is not a case id of `suite` with
    one of its `checks` (None: checks the suite finds at run time, such as upstream's test names,
    which it validates itself). Whether the subject and dtype exist is the suite's to say
    (unknown())."""
    parts = case_id.split("/")
    if len(parts) != 4 or not all(parts):
        raise KeyError(f"unknown case {case_id}: a case id is <suite>/<subject>/<dtype>/<check>")
    parsed = CaseId(*parts)
    if parsed.suite != suite:
        raise KeyError(f"unknown case {case_id}: not a case of the {suite} suite")
    if checks is not None and parsed.check not in set(checks):
        raise KeyError(f"unknown case {case_id}: the {suite} suite has no check '{parsed.check}'")
    return parsed


def unknown(case_id: CaseId, what: str) -> KeyError:
    """The error for a case id whose subject or dtype the suite does not have."""
    return KeyError(f"unknown case {case_id}: the {case_id.suite} suite has no {what}")


def info_and_dtype(case_id: CaseId, infos: dict[str, Any], noun: str) -> tuple[Any, Any]:
    """The OpInfo or ModuleInfo (`infos[subject]`) and the torch dtype a case id names; the
    KeyError of unknown() when there is no such info or it has no CPU kernel at the dtype."""
    info = infos.get(case_id.subject)
    dtypes = {dtype_name(d): d for d in info.supported_dtypes("cpu")} if info is not None else {}
    if case_id.dtype not in dtypes:
        raise unknown(case_id, f"such {noun} or dtype")
    return info, dtypes[case_id.dtype]


# --- the device under test -------------------------------------------------------------------

def device_type() -> str:
    """The device type under test: the PrivateUse1 backend the worker imported, or --device."""
    import backend_contract

    return backend_contract.current().device.split(":")[0]


# --- conclusions -----------------------------------------------------------------------------

def no_reference(evidence: dict[str, Any], inputs: str, first_cpu_error: str) -> tuple[str, dict[str, Any]]:
    """The case compared nothing because the CPU itself could not run any of its `inputs` ("sample
    input", "module input", ...): an `error` of the harness, not a verdict on the backend."""
    evidence.update({"exception_type": "NoReference", "where": Where.HARNESS,
                     "message": f"no {inputs} produced a CPU reference result (first CPU error: "
                                f"{first_cpu_error or 'none recorded'})"})
    return Outcome.ERROR, evidence


# --- options ---------------------------------------------------------------------------------

def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"'{text}' is not a boolean (true/false, yes/no, on/off, 1/0)")


def _integer(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(str(value).strip())  # '2.5' and 'many' raise ValueError


# An option's type -> its value from a text (the command line) or the typed value a run stored.
_TYPED = {
    "int": _integer,
    "float": float,
    "bool": lambda value: value if isinstance(value, bool) else _boolean(str(value)),
    "str": str,
    "path": lambda value: str(Path(str(value)).expanduser().absolute()),
}


def resolve_options(suite: str, declared: dict[str, dict[str, Any]], given: dict[str, Any]) -> dict[str, Any]:
    """Every option the suite declares, typed, from what the run was given (texts, or the typed
    values a run stored) and the declared defaults; a path made absolute, so a resumed run or a
    repro from another directory finds it. ValueError names the first problem: an option the suite
    does not declare, a value of the wrong type, a required option missing."""
    unknown_options = sorted(set(given) - set(declared))
    if unknown_options:
        takes = ", ".join(sorted(declared)) or "none"
        raise ValueError(f"the {suite} suite has no option {', '.join(unknown_options)} (it takes: {takes}; "
                         f"neuron-conform suites lists them; given as --NAME, it may be a misspelt option of "
                         f"run itself: run --help)")
    resolved: dict[str, Any] = {}
    for name, spec in declared.items():
        if given.get(name) is not None:  # a stored run's option without a default is null
            try:
                resolved[name] = _TYPED[spec["type"]](given[name])
            except ValueError as exc:
                article = "an" if spec["type"] == "int" else "a"
                raise ValueError(f"the {suite} suite's option {name} takes {article} {spec['type']}: {exc}") from None
        elif spec.get("required"):
            raise ValueError(f"the {suite} suite needs the option {name} ({spec.get('help', '')}): "
                             f"--suite-option {name}=VALUE")
        else:
            default = spec.get("default")
            resolved[name] = None if default is None else _TYPED[spec["type"]](default)
    return resolved


def configure(suite: ModuleType, name: str, given: dict[str, Any]) -> dict[str, Any]:
    """Resolves the run's options against the suite's declaration and hands them to its
    configure(options) (a suite that declares none may still define configure() for its own
    checks of the environment); returns the resolved options. ValueError names what is wrong."""
    declared = suite.describe_suite().get("options", {}) if callable(getattr(suite, "describe_suite", None)) else {}
    resolved = resolve_options(name, declared, given)
    if callable(getattr(suite, "configure", None)):
        suite.configure(resolved)
    return resolved
