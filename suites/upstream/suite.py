"""The upstream suite: PyTorch's own device-generic test files (test_ops.py, test_torch.py,
test_view_ops.py, ...) from a checkout of the installed torch's tag, run against the device the
way out-of-tree backends run them: the backend is imported before common_device_type (so its
PrivateUse1TestBase sees the device), and instantiate_device_type_tests instantiates each generic
class for this device only (PYTORCH_TESTING_DEVICE_ONLY_FOR).

Options (`run --suite-option pytorch_test_dir=DIR [--suite-option test_files=a.py,b.py]`, or
`run --pytorch-test-dir DIR --test-files ...`; `pytorch_configs=FILE.py`, docs/pytorch-configs.md):
  pytorch_test_dir  a PyTorch checkout (holding test/) or its test/ folder itself; when the
                    checkout says its version (version.txt), it must be the installed torch's
  test_files        comma-separated file names in test/ (test_view_ops.py or test_view_ops);
                    default: every test/test_*.py that calls instantiate_device_type_tests

Case ids: upstream/<file>.<GenericClass>/<dtype>/<test>: one case per instantiated test method,
`test` its generic name with upstream's parametrization but without the device and dtype
suffixes (TestViewOpsNEURON.test_view_as_real_neuron_float32 is
upstream/test_view_ops.TestViewOps/float32/test_view_as_real), dtype `-` for a test that takes
none. The class suffix (the device type's name upper-cased, NEURON for the bundled backend: the
suite sets the device type up before it imports a file) is not part of the id. A file that fails to import is one case, upstream/<file>/-/import, an `error`
naming the import error; the other files run.

Outcomes: unittest's verdict on the one method, run in its class's setUpClass/tearDownClass:
success `pass` (the worker makes it `fallback` when an op ran through the CPU fallback), an
AssertionError (a failed check of the test) `fail`, any other exception `error`, upstream's own
skip (unittest.SkipTest: onlyCUDA, skipIf..., self.skipTest) `skip` with upstream's reason.
A test upstream marks as an expected failure is recorded as what it did, with
`upstream_expected_failure` in its evidence: expectations belong to the skip lists, which match
case ids exactly.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
import unittest
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

import torch

from evidence import exception_evidence
from sides import Verdict
import suite_api
from vocabulary import Outcome, Where

# Not in the nightly's list: it needs a checkout of PyTorch's test/ (ci/nightly.sh adds it given one).
SUITE = suite_api.Suite(__name__, noun="test class", nouns="upstream test classes",
                        native_phrase="pass every test natively at every dtype", nightly=False,
                        options={
    "pytorch_test_dir": {"type": "path", "required": True,
                         "help": "a PyTorch checkout (or its test/ folder) at the installed torch's tag; "
                                 "ci/fetch-pytorch-tests.sh makes one"},
    "test_files": {"type": "str", "default": "",
                   "help": "comma-separated files of test/ to run (test_view_ops.py,test_torch.py); default: every "
                           "file that calls instantiate_device_type_tests"},
    "pytorch_configs": {"type": "path", "default": None,
                        "help": "a module calling PrivateUse1TestBase.set_test_configs (skiplist export --format "
                                "pytorch), imported before the test files as run_test.py would"},
})
IMPORT_CHECK = "import"


@suite_api.check(IMPORT_CHECK, "the test file imports (an error here names the import error)")
def imports(case: UpstreamCase) -> None:
    """A file that imported (making its case has answered for one that did not)."""
    case.evidence["file"] = f"{case.stem}.py"


_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


class Settings:
    files: list[Path] = []  # the run's test files, set by configure()


def _release(version: str) -> tuple[int, int, int] | None:
    match = _VERSION.match(version.strip())
    return (int(match[1]), int(match[2]), int(match[3] or 0)) if match else None


def _checkout_version(root: Path, test_dir: Path) -> tuple[Path, str] | None:
    for candidate in (root / "version.txt", test_dir.parent / "version.txt"):
        if candidate.is_file():
            return candidate, candidate.read_text().strip()
    return None


def _device_generic(path: Path) -> bool:
    try:
        return "instantiate_device_type_tests(" in path.read_text(errors="replace")
    except OSError:
        return False


@SUITE.configures
def configure(options: dict[str, Any]) -> None:
    """Takes the run's options; ValueError names what is wrong with them (the run stops, exit 2)."""
    root = Path(options["pytorch_test_dir"]).resolve()
    if not root.is_dir():
        raise ValueError(f"--pytorch-test-dir {root}: no such directory")
    test_dir = root / "test" if (root / "test").is_dir() else root
    if not any(test_dir.glob("test_*.py")):
        raise ValueError(f"--pytorch-test-dir {root}: holds no test/test_*.py files (is it a PyTorch checkout?)")
    said = _checkout_version(root, test_dir)
    if said and _release(said[1]) != _release(torch.__version__):
        raise ValueError(f"--pytorch-test-dir {root}: {said[0]} says {said[1]}, but the installed torch is "
                         f"{torch.__version__}; check out the tests of v{torch.__version__.split('+')[0]}")
    if options.get("test_files"):
        files = []
        for name in filter(None, (n.strip() for n in options["test_files"].split(","))):
            path = test_dir / (name if name.endswith(".py") else f"{name}.py")
            if not path.is_file():
                raise ValueError(f"--test-files: {name} is not a file of {test_dir}")
            files.append(path)
    else:
        files = sorted(p for p in test_dir.glob("test_*.py") if _device_generic(p))
        if not files:
            raise ValueError(f"--pytorch-test-dir {root}: no test file calls instantiate_device_type_tests")
    Settings.files = files
    if options.get("pytorch_configs"):
        _apply_configs(Path(options["pytorch_configs"]))
    _set_up_device_type()
    # Upstream's files import their neighbours (common helpers, other test files) by name.
    if str(test_dir) not in sys.path:
        sys.path.insert(0, str(test_dir))
    # Instantiate the generic classes for the device under test only, not for the CPU too.
    os.environ["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = torch._C._get_privateuse1_backend_name()


def _apply_configs(path: Path) -> None:
    """Imports the module that configures PrivateUse1TestBase (op_overrides, test_exclusions), as
    a team would before running PyTorch's tests: instantiate_device_type_tests then honours it."""
    if not path.is_file():
        raise ValueError(f"--suite-option pytorch_configs={path}: no such file")
    spec = importlib.util.spec_from_file_location("neuron_conform_pytorch_configs", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--suite-option pytorch_configs={path}: not a Python module")
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as exc:
        raise ValueError(f"--suite-option pytorch_configs={path} does not import: {type(exc).__name__}: {exc}") from exc


def _set_up_device_type() -> None:
    """Sets PrivateUse1TestBase up (its device type, its primary device) before any file is
    imported. Upstream does this lazily, when it instantiates the first test that takes a device,
    and binds the device type of an @ops test's op_overrides before that: a file whose @ops test
    happens to come first in the set of its class's names (the hash seed decides) would see
    device type `privateuse1`, and the configs' DecorateInfos (the device's own name) would not
    apply to it. Set up first, every file sees the device's own name."""
    from torch.testing._internal.common_device_type import PrivateUse1TestBase

    if getattr(torch, torch._C._get_privateuse1_backend_name(), None) is not None:  # else its tests say why
        PrivateUse1TestBase.setUpClass()


@SUITE.finds_checks
def test_checks() -> dict[str, str]:
    """The test methods of the configured files: known only once the files are imported (before
    configure(), none)."""
    checks: dict[str, str] = {}
    for file in _files() if Settings.files else ():
        if isinstance(file, TestFile):
            for test in file.tests.values():
                checks.setdefault(test.check, f"upstream's {test.generic_class}.{test.check}")
    checks.pop(IMPORT_CHECK, None)
    return checks


@SUITE.lists
def list_cases() -> Iterable[dict[str, str]]:
    for file in _files():
        if isinstance(file, ImportFailure):
            yield file.stem, "-", IMPORT_CHECK
            continue
        yield from ((test.subject, test.dtype, test.check) for test in file.tests.values())


# --- the files and their tests ------------------------------------------------------------

class Test:
    """One instantiated test method: where it lives and the case it is."""

    def __init__(self, file: str, cls: type, method: str, generic_class: str, check: str, dtype: str) -> None:
        self.cls, self.method, self.generic_class = cls, method, generic_class
        self.subject, self.check, self.dtype = f"{file}.{generic_class}", check, dtype

    @property
    def case_id(self) -> str:
        return str(suite_api.CaseId("upstream", self.subject, self.dtype, self.check))


class TestFile:
    def __init__(self, stem: str, module: ModuleType) -> None:
        self.stem = stem
        self.tests = {test.case_id: test for test in _instantiated_tests(stem, module)}


class ImportFailure:
    def __init__(self, stem: str, exc: BaseException) -> None:
        self.stem, self.exc, self.traceback = stem, exc, traceback.format_exc()[-4000:]


def _split_name(method: str, device: str) -> tuple[str, str]:
    """(check, dtype) of an instantiated test name: <generic name><_param suffix>_<device>[_<dtypes>]."""
    marker = f"_{device}"
    at = method.rfind(marker)
    while at >= 0:
        rest = method[at + len(marker):]
        if rest == "" or rest.startswith("_"):
            return method[:at], rest[1:] or "-"
        at = method.rfind(marker, 0, at)
    return method, "-"


def _instantiated_tests(stem: str, module: ModuleType) -> Iterable[Test]:
    from torch.testing._internal.common_device_type import DeviceTypeTestBase, PrivateUse1TestBase

    device = torch._C._get_privateuse1_backend_name()
    for cls in vars(module).values():
        # The device's instantiated classes of this file (not ones it imported from another).
        if not (isinstance(cls, type) and issubclass(cls, PrivateUse1TestBase) and cls.__module__ == module.__name__):
            continue
        generic = next((b for b in cls.__bases__ if not issubclass(b, DeviceTypeTestBase)), None)
        if generic is None:
            continue
        for method in sorted(name for name in vars(cls) if name.startswith("test") and callable(getattr(cls, name))):
            check, dtype = _split_name(method, device)
            yield Test(stem, cls, method, generic.__name__, check, dtype)


def _import(path: Path) -> TestFile | ImportFailure:
    stem = path.stem
    try:
        spec = importlib.util.spec_from_file_location(stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[stem] = module  # so that its classes' __module__ resolves, as under run_tests
        spec.loader.exec_module(module)
        return TestFile(stem, module)
    except BaseException as exc:  # SystemExit and SkipTest included: the file does not run here
        sys.modules.pop(stem, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        return ImportFailure(stem, exc)


def _files() -> list[TestFile | ImportFailure]:
    if not Settings.files:
        raise ValueError("the upstream suite was not configured (run it with --pytorch-test-dir)")
    return [_file(path.stem) for path in Settings.files]


@cache
def _file(stem: str) -> TestFile | ImportFailure:
    """The test file, imported once per process (a second import would make a second set of classes)."""
    for path in Settings.files:
        if path.stem == stem:
            return _import(path)
    raise KeyError(f"{stem}.py is not one of this run's test files")


# --- running -------------------------------------------------------------------------------

class _Result(unittest.TestResult):
    """unittest's result of one method, keeping the exceptions themselves (not only their text)."""

    def __init__(self) -> None:
        super().__init__()
        self.raised: list[tuple[str, BaseException, str]] = []  # (outcome, exception, traceback)
        self.skip_reason: str | None = None
        self.expected_failure = False
        self.unexpected_success = False

    def _keep(self, err) -> None:
        """A failed check of the test (AssertionError) is a `fail`, any other exception an `error`."""
        outcome = Outcome.FAIL if issubclass(err[0], AssertionError) else Outcome.ERROR
        self.raised.append((outcome, err[1], "".join(traceback.format_exception(*err))[-4000:]))

    def addFailure(self, test, err) -> None:
        super().addFailure(test, err)
        self._keep(err)

    def addError(self, test, err) -> None:
        super().addError(test, err)
        self._keep(err)

    def addSubTest(self, test, subtest, err) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._keep(err)

    def addSkip(self, test, reason) -> None:
        super().addSkip(test, reason)
        self.skip_reason = self.skip_reason or reason

    def addExpectedFailure(self, test, err) -> None:
        super().addExpectedFailure(test, err)
        self.expected_failure = True
        self._keep(err)

    def addUnexpectedSuccess(self, test) -> None:
        super().addUnexpectedSuccess(test)
        self.unexpected_success = True


@SUITE.makes_cases
class UpstreamCase(suite_api.Case):
    """A case of a test file of the run: the file imported once per process (`file`); a file that
    did not import ends its every case here, the suite's skip when upstream skips the file itself."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        super().__init__(case_id, ctx)
        self.stem = case_id.subject.split(".")[0]  # a test of the file, or the file's import
        file = _file(self.stem)
        if isinstance(file, ImportFailure):
            if isinstance(file.exc, unittest.SkipTest):
                raise suite_api.Skip(f"upstream skips the file: {file.exc}")
            if isinstance(file.exc, SystemExit) and file.exc.code in (None, 0):
                raise suite_api.Skip("the file exits at import (sys.exit(0)): it skips itself here")
            raise Verdict(Outcome.ERROR, {**exception_evidence(file.exc), "where": Where.IMPORT,
                                          "file": f"{self.stem}.py", "traceback": file.traceback})
        self.file = file


@SUITE.runs_found
def run_test(case: UpstreamCase) -> None:
    """One test method of the file, through unittest: its first failed check a `fail`, any other
    exception an `error`, upstream's own skip the suite's."""
    test = case.file.tests.get(str(case.id))
    if test is None:
        raise KeyError(f"{case.id}: no such test in {case.stem}.py (was the checkout changed since the listing?)")
    case.evidence.update(test=f"{test.cls.__name__}.{test.method}", file=f"{case.stem}.py")
    result = _Result()
    unittest.TestSuite([test.cls(test.method)]).run(result)
    if result.expected_failure or result.unexpected_success:
        case.evidence["upstream_expected_failure"] = True
    if result.raised:
        outcome, exc, trace = result.raised[0]
        behind = [f"{type(e).__name__}: {str(e)[:300]}" for _, e, _ in result.raised[1:]]
        raise Verdict(outcome, {**exception_evidence(exc), "traceback": trace, **({"errors": behind} if behind else {})})
    if result.skip_reason is not None:
        raise suite_api.Skip(result.skip_reason, **case.evidence)
