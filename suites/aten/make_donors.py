"""Regenerates donors.json from the ledgers of ops runs (suites/aten/README.md):

    python suites/aten/make_donors.py LEDGER.json [LEDGER.json ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness/worker"))
import suite_api  # noqa: E402 (the worker's modules, on the path from here on)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    suite_api.package()
    from neuron_conform_suites.aten.suite import make_donors

    make_donors(sys.argv[1:])
