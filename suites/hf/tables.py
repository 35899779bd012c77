"""The hf suite's reviewed table of the most-used architectures it reports on their own
(most_used.json). The cases transformers itself cannot run are the suite's own skip list
(not_runnable.json), which the harness reads as it reads every skip list."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import transformers

from suitelib import reviewed
from suitelib.tiny_models import causal_lm_architectures

HERE = Path(__file__).resolve().parent
MOST_USED_FILE = HERE / "most_used.json"


@reviewed.document
@cache
def most_used() -> list[str]:
    """most_used.json, checked: every name a causal-LM architecture of the installed transformers."""
    def problem(_: str, name: Any) -> str | None:
        if isinstance(name, str) and name in causal_lm_architectures():
            return None
        return f"{name!r} is not a causal-LM architecture of transformers {transformers.__version__}"

    fields = {"description": str, "architectures": reviewed.Field(list, entries=problem)}
    return reviewed.read(MOST_USED_FILE, fields)["architectures"]
