"""Packages torch_neuronsim with the C++ libraries that CMake built.

The libraries are not compiled here: CMake builds them (one build for the whole project) into
a staging folder, and the Makefile runs `pip install` with NEURONSIM_LIB_DIR pointing at it.
"""

import os
import pathlib
import shutil

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


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithLibraries}, distclass=BinaryDistribution)
