"""What an installed backend ships for neuron-conform, found without importing the backend or torch.

A backend's distribution declares its reviewed skip lists under the entry-point group
`neuron_conform.skiplists`, the entry named after the backend's module and pointing at a package
folder that holds the lists (*.json; skiplists/README.md):

    [project.entry-points."neuron_conform.skiplists"]
    torch_neuronx = "torch_neuronx.conform_skiplists"

`run` and `skiplist` apply those lists unless given --skiplists or --no-skiplists; the ledger's
dispositions are read from ledger/dispositions.json in the same folder.

Usage: backend_files.py --backend-module MODULE --skiplists
Prints one line, {"ready": true, "skiplists": [FOLDER, ...]} (empty when the backend declares
none), or {"fatal": WHY} when an entry names no folder.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

GROUP = "neuron_conform.skiplists"


def entry_folder(value: str) -> Path:
    """The folder of a dotted package path, found without importing it (or its parents): the
    top-level package's spec locates it, the rest of the path is folders below."""
    top, *rest = value.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"'{top}' is not an installed package")
    return Path(next(iter(spec.submodule_search_locations)), *rest)


def skiplist_folders(backend_module: str) -> list[str]:
    top = backend_module.split(".")[0]
    folders = []
    for entry in importlib.metadata.entry_points(group=GROUP):
        if entry.name not in (backend_module, top):
            continue
        try:
            folder = entry_folder(entry.value)
        except (LookupError, ValueError, ImportError) as exc:
            raise LookupError(f"the entry point {GROUP} '{entry.name} = {entry.value}' names no folder: {exc}") from exc
        if not folder.is_dir():
            raise LookupError(f"the entry point {GROUP} '{entry.name} = {entry.value}' names {folder}, which is no folder")
        folders.append(str(folder))
    return sorted(set(folders))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend-module", required=True)
    parser.add_argument("--skiplists", action="store_true", required=True)
    args = parser.parse_args()
    try:
        print(json.dumps({"ready": True, "skiplists": skiplist_folders(args.backend_module)}), flush=True)
    except LookupError as exc:
        print(json.dumps({"fatal": f"backend '{args.backend_module}': {exc}"}), flush=True)
        sys.exit(3)


if __name__ == "__main__":
    main()
