"""The Python side's layers, as test_architecture.py keeps the C++ side's: what each module of the
worker, the suites' shared library and the suites may import.

    programs     worker, zygote, check_model, pytorch_configs, backend_files (each run as a process)
    model_check  harness/worker/model_check/: check-model's work (check_model.py runs it); never a suite
    suites       suites/<name>/: its own modules, suitelib and core; never another suite
    suitelib     harness/worker/suitelib/: core and itself; never a suite
    core         the worker's modules every layer uses (vocabulary, evidence, comparison, sides, protocol, ...)

A module may import its own layer and those below it, except that model_check and the suites
import neither each other; a program imports no other program (what programs share lives below
them: protocol, quick_exit), zygote being part of the worker. Imports are read from the source
(every `import`, also inside functions), so a lazy import is held to the same rule."""

from __future__ import annotations

import ast
from pathlib import Path

from conform_cli import REPO

WORKER = REPO / "harness" / "worker"
SUITES = REPO / "suites"
PACKAGE = "neuron_conform_suites"

PROGRAMS = {"worker", "zygote", "check_model", "pytorch_configs", "backend_files"}
CORE = {"vocabulary", "evidence", "comparison", "sides", "suite_api", "backend_contract", "compilation",
        "dispatch_capture", "native_capture", "overloads", "case_context", "device_memory", "quick_exit", "protocol",
        "compile_progress"}
PACKAGES = {"suitelib", "model_check"}  # the worker's folders: each a layer of its own
# Each layer and the layers it may import besides its own. model_check sits beside the suites:
# it builds models with suitelib, as the hf suite does, but imports no suite, nor a suite it.
MAY_IMPORT = {"core": set(), "suitelib": {"core"}, "suites": {"core", "suitelib"},
              "model_check": {"core", "suitelib"}, "programs": {"core", "suitelib", "suites", "model_check"}}
PROGRAM_PARTS = {"zygote": "worker"}  # zygote.py is worker.py's --zygote mode, the fork server


def layer_of(module: str) -> str | None:
    """The layer of an imported module's name, or None for a module outside the project."""
    top = module.split(".")[0]
    if top in CORE:
        return "core"
    if top in PACKAGES:
        return top
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
        if relative.parts[0] in PACKAGES:
            out.append((path, ".".join(relative.parts[:-1]), relative.parts[0]))
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


def wrong_imports(path: Path, package: str, layer: str) -> list[str]:
    """The imports of one module that break the layering, each saying why."""
    wrong = []
    for line, module in imports(path, package):
        target = layer_of(module)
        where = f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path.name}:{line} imports {module}"
        if target is None:
            continue
        if target != layer and target not in MAY_IMPORT[layer]:
            wrong.append(f"{where} ({layer} may not import {target})")
        elif layer == "suites" and target == "suites" and module.split(".")[1] != package.split(".")[1]:
            wrong.append(f"{where} (another suite: share it through harness/worker/suitelib)")
        elif layer == "programs" and target == "programs" and PROGRAM_PARTS.get(module) != path.stem:
            wrong.append(f"{where} (another program: share it through a module below the programs)")
    return wrong


def test_imports_go_down_the_layers_and_no_suite_or_program_imports_another():
    assert [w for path, package, layer in project_modules() for w in wrong_imports(path, package, layer)] == []


def test_the_layer_check_sees_what_it_must_refuse(tmp_path):
    """The reader of imports resolves relative imports and finds lazy ones."""
    module = tmp_path / "m.py"
    module.write_text("from . import ops_random\nfrom .. import hf\ndef f():\n    import worker\n"
                      "    from neuron_conform_suites.hf import models\n")
    found = [m for _, m in imports(module, f"{PACKAGE}.ops")]
    assert found == [f"{PACKAGE}.ops.ops_random", f"{PACKAGE}.hf", "worker", f"{PACKAGE}.hf"]
    assert [layer_of(m) for m in found] == ["suites", "suites", "programs", "suites"]


def test_the_layer_check_refuses_a_program_importing_another_and_model_check_importing_a_suite(tmp_path):
    program = tmp_path / "check_model.py"
    program.write_text("from worker import emit\nimport zygote\nfrom model_check.cli import main\n")
    assert wrong_imports(program, "", "programs") == [
        "check_model.py:1 imports worker (another program: share it through a module below the programs)",
        "check_model.py:2 imports zygote (another program: share it through a module below the programs)"]
    worker = tmp_path / "worker.py"
    worker.write_text("import zygote\nfrom protocol import emit\n")
    assert wrong_imports(worker, "", "programs") == []  # its own fork server, and core
    part = tmp_path / "cli.py"
    part.write_text(f"from .fatal import Fatal\nfrom suitelib import training\nfrom {PACKAGE}.hf import suite\n")
    assert [m for _, m in imports(part, "model_check")] == ["model_check.fatal", "suitelib", f"{PACKAGE}.hf"]
    assert wrong_imports(part, "model_check", "model_check") == [
        f"cli.py:3 imports {PACKAGE}.hf (model_check may not import suites)"]


def test_every_suite_folder_is_a_regular_package():
    """Without __init__.py a suite folder would be one portion of a namespace package spread over
    every suites folder, and a user's ops/ would mix its modules with ours."""
    missing = [str(p.parent.relative_to(REPO)) for p in SUITES.glob("*/suite.py")
               if not (p.parent / "__init__.py").is_file()]
    missing += [str(p.relative_to(REPO)) for p in (WORKER / "suitelib").rglob("*") if p.is_dir()
                and p.name != "__pycache__" and not (p / "__init__.py").is_file()]
    assert missing == []


# The OpInfo library's modules (harness/worker/suitelib/opinfo/) in the order they build on one
# another: what makes a sample, the calls made of it, the judge of a case, the checks built on the
# judge. A module imports modules of earlier rows only (the package itself is database's).
OPINFO = WORKER / "suitelib" / "opinfo"
OPINFO_ORDER = [
    {"database"},
    {"facts"},
    {"sample_variants", "tolerances"},
    {"samples", "argument_variants", "layouts", "identity"},
    {"calls"},
    {"judge", "placements"},
    {"checks"},
]


def opinfo_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module of the OpInfo library) of every import of the library in the file: relative
    (`from . import calls`) or absolute (`from suitelib.opinfo import samples`, `from suitelib
    import opinfo`); a name the package re-exports is database's."""
    modules = {p.stem for p in OPINFO.glob("*.py")} - {"__init__"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = "suitelib.opinfo" + (f".{node.module}" if node.module else "") if node.level == 1 else node.module
            names = [alias.name for alias in node.names]
            if module == "suitelib":
                found += [(node.lineno, "database") for name in names if name == "opinfo"]
            elif module == "suitelib.opinfo":
                found += [(node.lineno, name if name in modules else "database") for name in names]
            elif module and module.startswith("suitelib.opinfo."):
                found.append((node.lineno, module.split(".")[2]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, "database") for alias in node.names if alias.name.startswith("suitelib.opinfo")]
    return found


def test_the_opinfo_library_builds_one_way(tmp_path):
    probe = tmp_path / "samples.py"  # the reader sees each form of import
    probe.write_text("from . import judge\nfrom .calls import Call\nfrom suitelib.opinfo import checks, by_subject\n"
                     "def f():\n    from suitelib import opinfo\n")
    assert opinfo_imports(probe) == [(1, "judge"), (2, "calls"), (3, "checks"), (3, "database"), (5, "database")]
    row = {module: index for index, modules in enumerate(OPINFO_ORDER) for module in modules}
    stems = {p.stem for p in OPINFO.glob("*.py")} - {"__init__"}
    assert stems == set(row), f"place each module of the OpInfo library in OPINFO_ORDER: {sorted(stems ^ set(row))}"
    wrong = [f"{p.name}:{line} imports {module}" for p in sorted(OPINFO.glob("*.py")) if p.stem != "__init__"
             for line, module in opinfo_imports(p) if row[module] >= row[p.stem]]
    assert wrong == []
