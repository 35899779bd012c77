"""The bundled backend's layers as a test: which folder of backend/csrc may include which.
docs/architecture.md (the backend) draws them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conform_cli import REPO

CSRC = REPO / "backend" / "csrc"
TESTS = REPO / "backend" / "tests"

# Each folder and the folders it may include (itself always). The runtime is the bottom; the
# engine runs plans on it; aten registers kernels that call the engine; the c10d backend stages
# collectives through host memory and needs neither the engine nor aten; the bindings and the
# tests sit on top.
ALLOWED = {
    "runtime": set(),
    "engine": {"runtime"},
    "aten": {"engine", "runtime"},
    "distributed": {"runtime"},
    "python": {"runtime", "engine", "aten", "distributed"},
    "tests": {"runtime", "engine", "aten", "distributed"},
}
# A project header: "folder/Name.h", in quotes or in angle brackets.
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:' + "|".join(ALLOWED) + r')/[^">]+)[">]', re.M)
# Any quoted include: one without a folder would escape the rule.
QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources() -> list[tuple[str, Path]]:
    """(layer, file) for every C++ source of the backend and its tests."""
    out = [(f.relative_to(CSRC).parts[0], f) for f in sorted(CSRC.rglob("*.[ch]*"))]
    out += [("tests", f) for f in sorted(TESTS.rglob("*.[ch]*"))]
    return out


def test_every_folder_is_a_layer():
    folders = {p.name for p in CSRC.iterdir() if p.is_dir()}
    assert folders == set(ALLOWED) - {"tests"}, "add the folder to ALLOWED and to docs/architecture.md"


@pytest.mark.parametrize("layer,path", sources(), ids=lambda v: str(v).rsplit("backend/", 1)[-1])
def test_each_file_includes_only_what_its_layer_may(layer, path):
    assert layer in ALLOWED, f"{path}: folder '{layer}' is not a known layer (add it to ALLOWED and the docs)"
    text = path.read_text()
    unrooted = [inc for inc in QUOTED.findall(text) if "/" not in inc]
    assert not unrooted, f"{path.relative_to(REPO)}: include project headers by their folder: {unrooted}"
    wrong = [inc for inc in INCLUDE.findall(text)
             if (target := inc.split("/")[0]) != layer and target not in ALLOWED[layer]]
    assert not wrong, f"{path.relative_to(REPO)} ({layer}) includes {wrong}"
