"""Skip lists as PyTorch's own test machinery takes them: `PrivateUse1TestBase.set_test_configs(
op_overrides=..., test_exclusions=...)` (common_device_type.py), so a team can run PyTorch's
run_test.py on its device under the same reviewed expectations (`neuron-conform skiplist export
--format pytorch`), and read such a module back (`skiplist import`). docs/pytorch-configs.md says what
maps to what.

  ops suite entries      -> op_overrides: {OpInfo full name: [DecorateInfo(skip or expectedFailure,
                            upstream class, upstream test, dtypes=...)]}, the check mapped to the
                            upstream test that checks the same thing (CHECK_TESTS), every test of the
                            op where there is none; a tolerance entry naming its dtypes and both rtol
                            and atol -> DecorateInfo(toleranceOverride({dtype: tol(atol, rtol)}), ...)
  upstream suite entries -> test_exclusions: {generic class: [generic test names]} (upstream can only
                            exclude a test, so an xfail entry is an exclusion too)
  other suites' entries  -> nothing PyTorch runs; listed in the module's comment

The module also keeps the entries it was made from (NEURON_CONFORM_ENTRIES), so that importing it
gives them back exactly; a module written by hand is read from its configuration.

Usage: pytorch_configs.py --torch-version              print the installed torch's version
       pytorch_configs.py --export FILE < {"entries": [...], "source": "..."}
       pytorch_configs.py --import FILE                 print {"entries": [...], "torch": ...}, or {"fatal": ...}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from quick_exit import run_main

from vocabulary import Category, Mode

# An ops-suite check -> the upstream test of test_ops.py (class, generic test name) that checks the
# same thing of an OpInfo. A check not here maps to every test of the op.
CHECK_TESTS = {
    "forward": ("TestCommon", "test_compare_cpu"),
    "out": ("TestCommon", "test_out"),
    "inplace": ("TestCommon", "test_variant_consistency_eager"),
    "layout": ("TestCommon", "test_noncontiguous_samples"),
    "errors": ("TestCommon", "test_errors"),
    "backward": ("TestBwdGradients", "test_fn_grad"),
    "gradgrad": ("TestBwdGradients", "test_fn_gradgrad"),
    "forward_ad": ("TestFwdGradients", "test_forward_mode_AD"),
}
TESTS_CHECK = {test: check for check, test in CHECK_TESTS.items()}
WILDCARD = "*"


def _listed(value: Any) -> list[str]:
    return value if isinstance(value, list) else [value]


def _decorator(entry: dict[str, Any], dtypes: list[str] | None) -> str | None:
    """The decorator an ops-suite entry is in PyTorch's terms, or None where it has none (a
    tolerance for every dtype, or with rtol or atol left to the OpInfo: tol() takes both)."""
    if entry["mode"] == Mode.SKIP:
        return f"unittest.skip({entry['reason']!r})"
    if entry["mode"] == Mode.XFAIL:
        return "unittest.expectedFailure"
    if dtypes is None or "rtol" not in entry or "atol" not in entry:
        return None
    by_dtype = ", ".join(f"torch.{d}: tol(atol={entry['atol']!r}, rtol={entry['rtol']!r})" for d in dtypes)
    return f"toleranceOverride({{{by_dtype}}})"


def configs(entries: list[dict[str, Any]]) -> tuple[dict[str, list[tuple]], dict[str, list[str]], list[dict]]:
    """(op_overrides as {op: [(decorator, class, test, dtypes)]}, test_exclusions, the
    entries PyTorch's machinery cannot express) of the entries."""
    overrides: dict[str, list[tuple]] = {}
    exclusions: dict[str, list[str]] = {}
    unexpressed = []
    for entry in entries:
        suites = _listed(entry.get("suite", WILDCARD))
        subjects, checks = _listed(entry["subject"]), _listed(entry.get("check", WILDCARD))
        dtypes = None if _listed(entry.get("dtype", WILDCARD)) == [WILDCARD] else _listed(entry["dtype"])
        decorator = _decorator(entry, dtypes)
        expressed = False
        if any(s in ("ops", WILDCARD) for s in suites) and WILDCARD not in subjects and decorator is not None:
            for subject in subjects:
                for check in checks:
                    test = CHECK_TESTS.get(check, (None, None))
                    # a tolerance is keyed by dtype inside the decorator
                    overrides.setdefault(subject, []).append(
                        (decorator, *test, None if entry["mode"] == Mode.TOLERANCE else dtypes))
            expressed = True
        if "upstream" in suites and entry["mode"] != Mode.TOLERANCE:
            for subject in subjects:
                generic_class = subject.rsplit(".", 1)[-1]
                tests = exclusions.setdefault(generic_class, [])
                tests.extend(c for c in checks if c not in tests)
            expressed = True
        if not expressed:
            unexpressed.append(entry)
    return overrides, exclusions, unexpressed


def render(entries: list[dict[str, Any]], source: str) -> str:
    """The Python module that applies the entries to PyTorch's PrivateUse1 test base."""
    overrides, exclusions, unexpressed = configs(entries)
    lines = [
        f'"""Reviewed expectations for PyTorch\'s own tests on this device (generated by neuron-conform skiplist',
        f"export --format pytorch from {source}; edit the lists, not this file).",
        "",
        "Import it before the test files (PYTORCH_TESTING_DEVICE_FOR_CUSTOM / run_test.py, after the backend):",
        "it calls PrivateUse1TestBase.set_test_configs(op_overrides=..., test_exclusions=...).",
        f"{len(unexpressed)} entr{'y' if len(unexpressed) == 1 else 'ies'} of suites PyTorch does not run are kept "
        f"in NEURON_CONFORM_ENTRIES only.",
        '"""',
        "",
        "import json",
        "import unittest",
        "",
        "import torch",
        "from torch.testing._internal.common_device_type import PrivateUse1TestBase, tol, toleranceOverride",
        "from torch.testing._internal.opinfo.core import DecorateInfo",
        "",
        "# What the module was made from, for `neuron-conform skiplist import`.",
        f"NEURON_CONFORM_ENTRIES = json.loads({json.dumps(json.dumps(entries, sort_keys=True))})",
        "",
        "op_overrides = {",
    ]
    for op in sorted(overrides):
        lines.append(f"    {op!r}: [")
        for wrapped, cls, test, dtypes in overrides[op]:
            dtype_text = "None" if dtypes is None else "(" + "".join(f"torch.{d}, " for d in dtypes) + ")"
            lines.append(f"        DecorateInfo({wrapped}, {cls!r}, {test!r}, dtypes={dtype_text}),")
        lines.append("    ],")
    lines += ["}", "", "test_exclusions = {"]
    lines += [f"    {cls!r}: {sorted(tests)!r}," for cls, tests in sorted(exclusions.items())]
    lines += ["}", "", "PrivateUse1TestBase.set_test_configs(op_overrides=op_overrides, test_exclusions=test_exclusions)", ""]
    return "\n".join(lines)


def _captured(path: Path) -> tuple[Any, dict[str, Any]]:
    """The module at `path`, imported with set_test_configs recording its arguments (and applying
    nothing): (the module, the keyword arguments of its last call)."""
    from torch.testing._internal.common_device_type import PrivateUse1TestBase

    calls: list[dict[str, Any]] = []
    own = PrivateUse1TestBase.__dict__.get("set_test_configs")  # else inherited from DeviceTypeTestBase
    PrivateUse1TestBase.set_test_configs = classmethod(lambda cls, **kwargs: calls.append(kwargs))
    try:
        spec = importlib.util.spec_from_file_location(f"_pytorch_configs_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if own is None:
            del PrivateUse1TestBase.set_test_configs
        else:
            PrivateUse1TestBase.set_test_configs = own
    return module, (calls[-1] if calls else {})


def read(path: Path) -> list[dict[str, Any]]:
    """The entries of a module that configures PyTorch's test base: the ones it was exported from,
    or those its op_overrides and test_exclusions say (a module written by hand)."""
    from torch.testing._internal.common_device_type import toleranceOverride

    module, called = _captured(path)
    if isinstance(getattr(module, "NEURON_CONFORM_ENTRIES", None), list):
        return module.NEURON_CONFORM_ENTRIES
    if not called:
        raise ValueError(f"{path} neither calls PrivateUse1TestBase.set_test_configs nor holds NEURON_CONFORM_ENTRIES")
    entries = []
    reason = f"imported from {path.name}"
    for op, decorations in sorted((called.get("op_overrides") or {}).items()):
        for info in decorations:
            test = (info.cls_name, info.test_name)
            check = TESTS_CHECK.get(test, WILDCARD) if test != (None, None) else WILDCARD
            tolerances = [d for d in info.decorators if isinstance(d, toleranceOverride)]
            for override in tolerances:  # {dtype: tol(atol, rtol)}: one entry each
                for dtype, given in sorted(override.d.items(), key=str):
                    entries.append({"suite": "ops", "subject": op, "check": check,
                                    "dtype": str(dtype).removeprefix("torch."), "mode": Mode.TOLERANCE,
                                    "category": Category.PRECISION, "rtol": given.rtol, "atol": given.atol,
                                    "reason": reason})
            if len(tolerances) == len(info.decorators):
                continue
            skip = any(getattr(d, "__name__", "") != "expectedFailure" for d in info.decorators
                       if not isinstance(d, toleranceOverride))
            entries.append({"suite": "ops", "subject": op, "check": check,
                            "dtype": sorted(str(d).removeprefix("torch.") for d in info.dtypes) if info.dtypes else WILDCARD,
                            "mode": Mode.SKIP if skip else Mode.XFAIL, "category": Category.UNSUPPORTED_OP,
                            "reason": reason})
    # test_exclusions name a class, not its file: the entry takes the tests of that name in any file.
    for cls, tests in sorted((called.get("test_exclusions") or {}).items()):
        entries.append({"suite": "upstream", "subject": WILDCARD, "check": sorted(tests), "dtype": WILDCARD,
                        "mode": Mode.SKIP, "category": Category.UNSUPPORTED_OP,
                        "reason": f"{reason} (test_exclusions of {cls})"})
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--torch-version", action="store_true")
    mode.add_argument("--export", metavar="FILE")
    mode.add_argument("--import", dest="import_", metavar="FILE")
    args = parser.parse_args()
    try:
        if args.torch_version:
            import torch

            print(json.dumps({"torch": torch.__version__}))
        elif args.export:
            given = json.load(sys.stdin)
            Path(args.export).write_text(render(given["entries"], given.get("source", "the skip lists")))
            overrides, exclusions, unexpressed = configs(given["entries"])
            print(json.dumps({"op_overrides": sum(map(len, overrides.values())), "test_exclusions":
                              sum(map(len, exclusions.values())), "unexpressed": len(unexpressed)}))
        else:
            import torch

            print(json.dumps({"entries": read(Path(args.import_)), "torch": torch.__version__}))
    except (OSError, ValueError, SyntaxError, ImportError, AttributeError) as exc:
        print(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}))
        sys.exit(3)


if __name__ == "__main__":
    run_main(main)
