"""The harness as a user installs it (docs/install.md): the two wheels of `make wheel`, pip-installed
into a fresh environment outside the checkout with the same torch, run from another folder while
the checkout is hidden (a private mount namespace binds an empty folder over it), so nothing the
installed CLI loads can come from the source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conform_cli import REPO, outcomes, recorded, run_record

DIST = REPO / "dist"
CONSTRAINTS = REPO / "constraints.txt"
LISTED_BACKEND = Path(__file__).resolve().parent / "planted_packages" / "listed_backend"


def wheels() -> list[Path]:
    found = sorted(DIST.glob("neuron_conform-*.whl")) + sorted(DIST.glob("torch_neuronsim-*.whl"))
    assert len(found) == 2, f"expected the two wheels of `make wheel` in {DIST}, found {found}"
    return found


class Installed:
    """A fresh environment holding the wheels, and a folder to run in; commands run with the
    checkout hidden and none of the checkout's environment (PYTHONPATH, NEURON_CONFORM_*)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env_dir = root / "env"
        self.work = root / "work"
        self.work.mkdir()
        self.hidden = root / "empty"
        self.hidden.mkdir()

    @property
    def bin(self) -> Path:
        return self.env_dir / "bin"

    def environ(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("NEURON_CONFORM", "PYTHON")) and k != "VIRTUAL_ENV"}
        return {**keep, "PATH": f"{self.bin}:/usr/bin:/bin", **extra}

    def run(self, *args: str, timeout: float = 600, **extra: str) -> subprocess.CompletedProcess[str]:
        """`neuron-conform ARGS` in the work folder, the checkout hidden behind an empty folder."""
        unshare = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
        script = 'mount --bind "$0" "$1" && shift && exec neuron-conform "$@"'
        return subprocess.run([*unshare, "sh", "-c", script, str(self.hidden), str(REPO), *args],
                              cwd=self.work, env=self.environ(**extra), capture_output=True, text=True,
                              timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    copies = []
    for wheel in wheels():  # copied first: the install must not read the checkout's dist/ later
        copies.append(root / wheel.name)
        shutil.copy2(wheel, copies[-1])
    listed = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                             str(LISTED_BACKEND), "-w", str(root)], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    shutil.rmtree(LISTED_BACKEND / "build", ignore_errors=True)
    for egg in LISTED_BACKEND.glob("*.egg-info"):
        shutil.rmtree(egg)
    shutil.copy2(CONSTRAINTS, root / "constraints.txt")
    inst = Installed(root)
    venv.create(inst.env_dir, with_pip=True)
    pip = subprocess.run([str(inst.bin / "python"), "-m", "pip", "install", "-q", "-c", str(root / "constraints.txt"),
                          *map(str, copies), f"neuron_conform[hf] @ file://{copies[0]}",
                          *map(str, root.glob("listed_backend-*.whl"))],
                         capture_output=True, text=True, env=inst.environ(), timeout=1200)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return inst


def test_the_installed_cli_runs_a_suite_and_reports_from_any_folder(installed: Installed) -> None:
    ran = installed.run("run", "--suite", "ops", "--ops", "^(add|mul)$", "--dtypes", "float32")
    assert ran.returncode == 0, ran.stderr
    db = installed.work / "out" / "results.db"
    assert db.is_file()  # the documented default: out/results.db under the current folder
    run = run_record(db)
    counts = run["outcomes"]
    assert counts.get("pass", 0) >= 10 and not set(counts) - {"pass", "xfail"}, counts
    # The bundled backend's own reviewed lists, from its installed package, applied by default.
    folders = run["backend_info"]["skiplists"]
    assert folders == [str(installed.env_dir / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
                           / "site-packages" / "torch_neuronsim" / "skiplists")]
    assert "skip lists: " in ran.stderr and "expected to fail" in ran.stderr

    report = installed.run("report")
    assert report.returncode == 0, report.stderr
    latest = installed.work / "out" / "latest"
    assert (latest / "index.html").is_file()
    coverage = json.loads((latest / "coverage.json").read_text())
    assert coverage["run"]["suite"] == "ops"


def test_the_installed_cli_runs_hf_and_check_model(installed: Installed) -> None:
    checked = installed.run("check-model", "--hf", "llama", "--json")
    assert checked.returncode in (0, 1), checked.stderr  # 2 would be bad input or a failure to start
    verdict = json.loads(checked.stdout)
    assert any(op["op"].startswith("aten::") for op in verdict["ops"])

    hf = installed.run("run", "--suite", "hf", "--ops", "^LlamaForCausalLM$", "--dtypes", "float32", "--strict")
    assert hf.returncode == 0, hf.stderr
    assert "pass 6" in hf.stderr  # forward, generate, backward, static_shapes, compiled_forward, train_step


def test_nothing_installed_names_the_checkout(installed: Installed) -> None:
    """No file of the installed packages holds the checkout's path (the CLI's binary included),
    and every suite the installed CLI finds lives in the environment."""
    needle = str(REPO).encode()
    site = next((installed.env_dir / "lib").glob("python3*/site-packages"))
    for package in ("neuron_conform", "torch_neuronsim", "listed_backend"):
        for path in (site / package).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            if path.suffix == ".so":  # the backend's debug information names its sources: not loaded
                dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, check=True).stdout
                assert needle not in dynamic, (path, "search path")
            else:
                assert needle not in path.read_bytes(), path
    suites = installed.run("suites", "--json")
    assert suites.returncode == 0, suites.stderr
    folders = [s["folder"] for s in json.loads(suites.stdout)]
    assert folders and all(f.startswith(str(site / "neuron_conform" / "suites")) for f in folders), folders


def test_a_backends_entry_point_skip_list_is_applied_by_default(installed: Installed) -> None:
    db = installed.work / "listed.db"
    args = ("run", "--backend-module", "listed_backend", "--ops", "^(add|mul)$", "--dtypes", "float32", "--db", str(db))
    assert installed.run(*args).returncode == 0
    got = outcomes(db)
    assert {o for c, o in got.items() if c.startswith("ops/mul/")} == {"skip"}
    assert "skip" not in {o for c, o in got.items() if c.startswith("ops/add/")}  # the bundled lists are not its
    # --no-skiplists turns them off; --skiplists replaces them.
    off = installed.work / "off.db"
    assert installed.run(*args[:-1], str(off), "--no-skiplists").returncode == 0
    assert "skip" not in set(outcomes(off).values())


@pytest.mark.parametrize("what, setup, expected", [
    ("a backend that does not import", {"args": ("--backend-module", "no_such_backend")},
     "cannot import backend module 'no_such_backend'"),
    ("a torch older than the oldest supported", {"old_torch": True}, "is older than 2.8"),
])
def test_bad_environments_are_one_line_before_any_case(installed: Installed, tmp_path: Path, what: str,
                                                        setup: dict, expected: str) -> None:
    extra = {}
    if setup.get("old_torch"):  # the environment's torch, reporting an old version to every worker
        (tmp_path / "sitecustomize.py").write_text("import torch\ntorch.__version__ = '2.7.1'\n")
        extra["PYTHONPATH"] = str(tmp_path)
    db = tmp_path / "bad.db"
    result = installed.run("run", "--ops", "^add$", "--dtypes", "float32", "--db", str(db),
                           *setup.get("args", ()), **extra)
    assert result.returncode == 2, (what, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("neuron-conform: error:")]
    assert len(errors) == 1 and expected in errors[0], (what, result.stderr)
    assert recorded(db) == 0


def test_an_incomplete_install_says_so(installed: Installed) -> None:
    """Last: it breaks the environment (the worker's files gone, as a corrupt install)."""
    site = next((installed.env_dir / "lib").glob("python3*/site-packages"))
    (site / "neuron_conform" / "harness" / "worker" / "worker.py").unlink()
    result = installed.run("run", "--ops", "^add$")
    assert result.returncode == 2
    assert "the installation is incomplete" in result.stderr and "worker.py" in result.stderr
