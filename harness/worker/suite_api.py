"""What every suite shares (suites/README.md describes the API): where suites are found and how
they are imported, the suite's one declaration (`Suite`) and its registry of checks (`check`),
case ids, the options a suite declares, the device under test, and the conclusions every suite
reaches the same way.

Suites are imported as the package `neuron_conform_suites`, whose folders are those of
NEURON_CONFORM_SUITES (os.pathsep-separated, first wins) and then the project's suites/: the ops
suite is `neuron_conform_suites.ops.suite`, its modules `neuron_conform_suites.ops.<module>`.
Every suite folder is a regular package (an `__init__.py`), so the first folder holding a suite
of a name owns all of that name's modules: a user's `ops/` never mixes its modules with ours. A
suite imports its own modules package-relatively (`from . import models`) and what it shares
with other suites from the worker's library (`lib`), never another suite.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Protocol

from evidence import dtype_name, exception_evidence
from sides import Stage, Verdict
from vocabulary import EvidenceFlag, Outcome, Where

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


def load_suite(name: str) -> Suite:
    """The suite's declaration (the `SUITE` of `<name>/suite.py`); SystemExit naming the folders
    searched when there is none, ValueError when its suite.py declares no Suite."""
    found = find_suites()
    if not name.isidentifier() or name not in found:
        raise SystemExit(f"unknown suite '{name}': no {name}/suite.py in {', '.join(map(str, suite_dirs()))}")
    if not (found[name] / "__init__.py").is_file():
        raise ValueError(f"{found[name]} has no __init__.py: a suite folder is a regular package "
                         f"(suites/README.md, Writing a suite)")
    package()
    module = importlib.import_module(f"{PACKAGE}.{name}.suite")
    suite = getattr(module, "SUITE", None)
    if not isinstance(suite, Suite):
        raise ValueError("its suite.py defines no SUITE = suite_api.Suite(__name__, ...) (suites/README.md says "
                         "what a suite declares)")
    return suite


# --- the suite's declaration and its checks --------------------------------------------------

@dataclass(frozen=True)
class Check:
    """One check of a suite, declared once (check()): its listing, description, applicability and
    dispatch all come from here."""

    name: str
    description: str
    run: Callable[..., Any]
    applies: Callable[..., bool] | None = None  # (the suite's subject...) -> whether it has a case
    native: bool = True  # counts when deciding whether a subject runs natively
    api: bool = True  # decides whether the public API the subject tests works (api-compat)
    requires: Callable[[Any], str | None] | None = None  # (ctx) -> why the check cannot run here, or None
    traits: Mapping[str, Any] = field(default_factory=dict)  # what else the suite's runner reads of it


# suite name -> its checks, in the order they were declared
_CHECKS: dict[str, dict[str, Check]] = {}


def _suite_of(module_name: str) -> str:
    """The suite a module belongs to, from its name (neuron_conform_suites.<suite>.<module>)."""
    parts = module_name.split(".")
    if len(parts) < 3 or parts[0] != PACKAGE:
        raise ValueError(f"{module_name} is not a module of a suite ({PACKAGE}.<suite>.<module>)")
    return parts[1]


def check(name: str, description: str, *, applies: Callable[..., bool] | None = None, native: bool = True,
          api: bool = True, requires: Callable[[Any], str | None] | None = None,
          **traits: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declares the decorated function the runner of the check `name` of the suite whose module it
    is in (suite.py or a module beside it): `description` is what the check checks, `applies(...)`
    whether a subject has a case of it (the suite decides what it is given; None: every subject),
    `native` whether it counts for "runs natively", `api` whether it decides the public API's
    status, `requires(ctx)` why it cannot run against this backend (what it needs is missing; None:
    it can), which makes each of its cases the suite's skip (suite_skip()) before the runner is
    called; `traits`, anything else the suite's own runner reads of the check (the modules suite's
    `needs_grad`, ...). A second declaration of a name is refused."""
    if not name.isidentifier() and not name.replace("-", "_").isidentifier():
        raise ValueError(f"check name '{name}' is not a name")

    def register(run: Callable[..., Any]) -> Callable[..., Any]:
        checks = _CHECKS.setdefault(_suite_of(run.__module__), {})
        if name in checks:
            raise ValueError(f"check '{name}' is declared twice: {checks[name].run.__module__} and {run.__module__}")
        checks[name] = Check(name, description, run, applies, native, api, requires, traits)
        return run
    return register


Hook = Callable[..., Any]


class Suite:
    """What a suite is, declared once in its suite.py (`SUITE = suite_api.Suite(__name__, ...)`): its
    name (its folder's), how reports name its subjects, its options, its checks (check()) and the
    functions the worker calls, registered with the decorators below. The worker calls only this."""

    def __init__(self, module_name: str, *, noun: str | None = None, nouns: str | None = None,
                 native_phrase: str | Callable[[], str] | None = None,
                 headlines: Callable[[], list[dict[str, Any]]] | None = None,
                 share_cores: bool = False, options: dict[str, dict[str, Any]] | None = None,
                 nightly: bool | dict[str, Any] = True) -> None:
        """`native_phrase` and `headlines` may be functions when they depend on the run's options or
        on data the suite reads: describe() calls them. `nightly` says whether ci/nightly.sh runs
        the suite (False: not unattended, such as a suite that needs a checkout the run names), and
        how: {"shards": N (the nightly workflow's jobs for it), "options": {NAME: VALUE} (its
        --suite-option values there)}."""
        self.name = _suite_of(module_name)
        self._case: Callable[[CaseId, Any], SuiteCase] | None = None
        self.options = options or {}
        self._fixed = {k: v for k, v in (("noun", noun), ("nouns", nouns), ("native_phrase", native_phrase))
                       if v is not None}
        if share_cores:
            self._fixed["share_cores"] = True
        if headlines is not None:
            self._fixed["headlines"] = headlines
        if nightly is not True:
            self._fixed["nightly"] = nightly if nightly is False else self._nightly(nightly)
        self._lister: Hook | None = None
        self._configure: Hook | None = None
        self._public_api: Hook | None = None
        self._found_checks: Hook | None = None
        self._run_found: Callable[[Any], None] | None = None

    def _nightly(self, nightly: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(nightly) - {"shards", "options"})
        if unknown:
            raise ValueError(f"the {self.name} suite's nightly declaration: unknown field {', '.join(unknown)} "
                             f"(known: shards, options)")
        shards = nightly.get("shards", 1)
        if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
            raise ValueError(f"the {self.name} suite's nightly declaration: shards must be a positive int")
        resolve_options(self.name, self.options, nightly.get("options", {}))  # the values must be its options'
        return {"shards": shards, "options": dict(nightly.get("options", {}))}

    # --- what the suite registers
    def lists(self, lister: Hook) -> Hook:
        """The suite's cases: `lister()` yields (subject, dtype, check) rows."""
        self._lister = lister
        return lister

    def makes_cases(self, make: Callable[[CaseId, Any], SuiteCase]) -> Callable[[CaseId, Any], SuiteCase]:
        """`make(case_id, ctx)` (a case type, or a function) makes the suite's case (a SuiteCase) from
        a parsed id: the one thing every check's run is given; the KeyError of unknown() when the
        suite has no such subject or dtype."""
        self._case = make
        return make

    def configures(self, configure: Hook) -> Hook:
        """`configure(options)`: the run's options, resolved, before anything else."""
        self._configure = configure
        return configure

    def declares_api(self, public_api: Hook) -> Hook:
        """`public_api()`: the public torch names the suite's subjects test (harness/worker/suitelib/public_api.py)."""
        self._public_api = public_api
        return public_api

    def finds_checks(self, found: Hook) -> Hook:
        """`found()` -> {name: description}: checks known only at run time (upstream's test names, a
        check named after an option); run by runs_found()'s function, which validates them."""
        self._found_checks = found
        return found

    def runs_found(self, run: Callable[[Any], None]) -> Callable[[Any], None]:
        """`run(case) -> None`: the run of every check found at run time (finds_checks()), as a
        declared check's run: a KeyError naming the check when it is no check of the suite."""
        self._run_found = run
        return run

    # --- what the worker and the suite's own code read
    @property
    def checks(self) -> dict[str, Check]:
        return _CHECKS.get(self.name, {})

    def checks_for(self, *subject: Any) -> list[str]:
        """The checks that have a case for the subject (what applies() is given is the suite's)."""
        return [c.name for c in self.checks.values() if c.applies is None or c.applies(*subject)]

    def describe(self) -> dict[str, Any]:
        """The declaration reports render from (suites/README.md), stored with every run."""
        checks = {name: c.description for name, c in self.checks.items()}
        if self._found_checks is not None:
            checks.update(self._found_checks())
        described: dict[str, Any] = {k: v() if callable(v) else v for k, v in self._fixed.items()}
        described["checks"] = checks
        if not all(c.native for c in self.checks.values()):
            described["native_checks"] = [c.name for c in self.checks.values() if c.native]
        if self.options:
            described["options"] = self.options
        if (own := self.own_skiplist()) is not None:
            described["own_skiplist"] = str(own)
        return described

    def own_skiplist(self) -> Path | None:
        """The suite's own skip list, if it ships one: the cases no device can run (the CPU
        reference included), category not_runnable, beside its suite.py. The harness applies it
        before the backend's lists and reads it as it reads them (skiplists/schema.json)."""
        folder = find_suites().get(self.name)
        own = folder / "not_runnable.json" if folder is not None else None
        return own if own is not None and own.is_file() else None

    def api_checks(self) -> list[str]:
        """The checks whose cases decide whether the public API a subject tests works."""
        return [c.name for c in self.checks.values() if c.api]

    def list_cases(self) -> Iterator[dict[str, str]]:
        if self._lister is None:
            raise ValueError(f"the {self.name} suite registers no lister (@SUITE.lists)")
        for subject, dtype, check_name in self._lister():
            yield CaseId(self.name, subject, dtype, check_name).listed()

    def parse(self, case_id: str) -> CaseId:
        """The case id's fields; KeyError naming what is wrong when it is not a case id of this suite
        with one of its checks (a check found at run time is the runner's to validate). Whether the
        subject and dtype exist is the runner's to say (unknown())."""
        parts = case_id.split("/")
        if len(parts) != 4 or not all(parts):
            raise KeyError(f"unknown case {case_id}: a case id is <suite>/<subject>/<dtype>/<check>")
        parsed = CaseId(*parts)
        if parsed.suite != self.name:
            raise KeyError(f"unknown case {case_id}: not a case of the {self.name} suite")
        if parsed.check not in self.checks and self._found_checks is None:
            raise KeyError(f"unknown case {case_id}: the {self.name} suite has no check '{parsed.check}'")
        return parsed

    def run_case(self, case_id: str, ctx: Any) -> tuple[str, dict[str, Any]]:
        """One case, the one way every suite runs: the id parsed, its check's requirement (the
        suite's skip when it is not met), the suite's case made from the id, the check's
        `run(case)`; a Verdict raised ends the case (`case.failed`), as a Stage does (an `error` at
        that stage), else `case.conclude()`. A Skip raised anywhere is the suite's skip; a Verdict
        raised while the case is made is the outcome as it is."""
        parsed = self.parse(case_id)
        declared = self.checks.get(parsed.check)
        if declared is not None and declared.requires is not None and (missing := declared.requires(ctx)):
            return suite_skip(missing)
        try:
            if self._case is None:
                raise ValueError(f"the {self.name} suite declares no case type (@SUITE.makes_cases)")
            run = declared.run if declared is not None else self._run_found
            if run is None:
                raise ValueError(f"the {self.name} suite finds checks at run time but registers no "
                                 f"@SUITE.runs_found")
            try:
                case = self._case(parsed, ctx)
            except Verdict as verdict:
                return verdict.outcome, verdict.evidence
            try:
                run(case)
            except Verdict as verdict:
                return case.failed(verdict)
            except Stage as stage:  # an exception, with the stage of the case it happened in
                return case.failed(Verdict(Outcome.ERROR, {**exception_evidence(stage.cause), "stage": stage.stage}))
            return case.conclude()
        except Skip as skip:
            return suite_skip(str(skip), **skip.details)

    def configure(self, given: dict[str, Any]) -> dict[str, Any]:
        """Resolves the run's options against the declaration, hands them to the suite's configure
        (a suite that declares none may still check its environment there) and returns them.
        ValueError names what is wrong."""
        resolved = resolve_options(self.name, self.options, given)
        if self._configure is not None:
            self._configure(resolved)
        return resolved

    def public_api(self) -> dict[str, Any] | None:
        return None if self._public_api is None else self._public_api()


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


class SuiteCase(Protocol):
    """What a suite's case gives the registry: how a Verdict ends it and what it concludes when
    its check returned. Suites whose cases compare two sides build on sides.Sides."""

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]: ...

    def conclude(self) -> tuple[str, dict[str, Any]]: ...


class Case:
    """The plainest SuiteCase: the parsed id, the run's context and the evidence the check
    gathers (`case.evidence`); a Verdict's evidence is added to it, and a check that returns
    passes with it."""

    def __init__(self, case_id: CaseId, ctx: Any) -> None:
        self.id, self.ctx = case_id, ctx
        self.evidence: dict[str, Any] = {}

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        self.evidence.update(verdict.evidence)
        return verdict.outcome, self.evidence

    def conclude(self) -> tuple[str, dict[str, Any]]:
        return Outcome.PASS, self.evidence


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

def suite_skip(message: str, **details: Any) -> tuple[str, dict[str, Any]]:
    """The case the suite itself does not run here, and why (`message`): what its check needs is
    missing (a Dynamo backend, a device module's streams, a package) or upstream's test skipped
    itself. Neither the backend's outcome nor a skip list's: a `skip` flagged `suite_skip`, never
    rerun. The one way every suite says so."""
    return Outcome.SKIP, {"message": message, **details, EvidenceFlag.SUITE_SKIP: True}


class Skip(Exception):
    """Raised anywhere in a case (a check's run, a helper it calls): the case is the suite's skip
    (suite_skip()), with `message` and any further evidence `details`."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


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
