"""The Python side's layers, as test_architecture.py keeps the C++ side's: what each module of the
worker, the suites' shared library and the suites may import.

    programs   worker, zygote, check_model, pytorch_configs, backend_files (each run as a process)
    suites     suites/<name>/: its own modules, suitelib and core; never another suite
    suitelib   harness/worker/suitelib/: core and itself; never a suite
    core       the worker's modules every layer uses (vocabulary, evidence, comparison, sides, ...)

A module may import its own layer and those below it. Imports are read from the source (every
`import`, also inside functions), so a lazy import is held to the same rule."""

from __future__ import annotations

import ast
from pathlib import Path

from conform_cli import REPO

WORKER = REPO / "harness" / "worker"
SUITES = REPO / "suites"
PACKAGE = "neuron_conform_suites"

PROGRAMS = {"worker", "zygote", "check_model", "pytorch_configs", "backend_files"}
CORE = {"vocabulary", "evidence", "comparison", "sides", "suite_api", "backend_contract", "compilation",
        "dispatch_capture", "native_capture", "overloads", "case_context", "device_memory", "quick_exit"}
ORDER = ["core", "suitelib", "suites", "programs"]


def layer_of(module: str) -> str | None:
    """The layer of an imported module's name, or None for a module outside the project."""
    top = module.split(".")[0]
    if top in CORE:
        return "core"
    if top == "suitelib":
        return "suitelib"
    if top == PACKAGE:
        return "suites"
    if top in PROGRAMS:
        return "programs"
    return None


def imports(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file; relative ones resolved against
    `package` (the file's package)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
                found += [(node.lineno, f"{module}.{alias.name}" if not node.module else module)
                          for alias in node.names]
            else:
                found.append((node.lineno, node.module or ""))
    return found


def project_modules() -> list[tuple[Path, str, str]]:
    """(file, its package, its layer) for every module of the worker and of the suites."""
    out = []
    for path in sorted(WORKER.rglob("*.py")):
        relative = path.relative_to(WORKER).with_suffix("")
        if relative.parts[0] == "suitelib":
            out.append((path, ".".join(relative.parts[:-1]), "suitelib"))
        elif relative.name in PROGRAMS:
            out.append((path, "", "programs"))
        else:
            out.append((path, "", "core"))
    for suite in sorted(p.parent for p in SUITES.glob("*/suite.py")):
        for path in sorted(suite.rglob("*.py")):
            out.append((path, f"{PACKAGE}.{suite.name}", "suites"))
    return out


def test_every_module_of_the_worker_is_in_a_layer():
    stray = {p.stem for p, _, layer in project_modules() if layer == "core"} - CORE - {"__init__"}
    assert stray == set(), f"worker modules in no layer (add them to CORE or PROGRAMS): {stray}"


def test_imports_go_down_the_layers_and_suites_import_no_other_suite():
    wrong = []
    for path, package, layer in project_modules():
        for line, module in imports(path, package):
            target = layer_of(module)
            where = f"{path.relative_to(REPO)}:{line} imports {module}"
            if target is None:
                continue
            if ORDER.index(target) > ORDER.index(layer):
                wrong.append(f"{where} ({layer} may not import {target})")
            elif layer == "suites" and target == "suites" and module.split(".")[1] != package.split(".")[1]:
                wrong.append(f"{where} (another suite: share it through harness/worker/suitelib)")
    assert wrong == []


def test_the_layer_check_sees_what_it_must_refuse(tmp_path):
    """The reader of imports resolves relative imports and finds lazy ones."""
    module = tmp_path / "m.py"
    module.write_text("from . import ops_random\nfrom .. import hf\ndef f():\n    import worker\n"
                      "    from neuron_conform_suites.hf import models\n")
    found = [m for _, m in imports(module, f"{PACKAGE}.ops")]
    assert found == [f"{PACKAGE}.ops.ops_random", f"{PACKAGE}.hf", "worker", f"{PACKAGE}.hf"]
    assert [layer_of(m) for m in found] == ["suites", "suites", "programs", "suites"]


def test_every_suite_folder_is_a_regular_package():
    """Without __init__.py a suite folder would be one portion of a namespace package spread over
    every suites folder, and a user's ops/ would mix its modules with ours."""
    missing = [str(p.parent.relative_to(REPO)) for p in SUITES.glob("*/suite.py")
               if not (p.parent / "__init__.py").is_file()]
    missing += [str(p.relative_to(REPO)) for p in (WORKER / "suitelib").rglob("*") if p.is_dir()
                and p.name != "__pycache__" and not (p / "__init__.py").is_file()]
    assert missing == []
