"""neuron-conform, installed: the `neuron-conform` command runs the CLI this package carries.

The wheel holds the C++ CLI (bin/neuron-conform) and the files it reads, laid out as in the
repository (harness/worker, suites, reports/templates), so the CLI finds them next to itself. This
launcher only points the CLI at the Python of the environment it is installed in, whose torch and
backend the workers import, unless NEURON_CONFORM_PYTHON (or --python) names another.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__version__ = "0.1.0"

CLI = Path(__file__).resolve().parent / "bin" / "neuron-conform"


def main() -> None:
    if not os.access(CLI, os.X_OK):
        print(f"neuron-conform: error: the installation is incomplete: {CLI} is missing or not executable "
              "(reinstall the neuron_conform wheel)", file=sys.stderr)
        sys.exit(2)
    env = dict(os.environ)
    env.setdefault("NEURON_CONFORM_PYTHON", sys.executable)
    os.execve(CLI, [str(CLI), *sys.argv[1:]], env)
