"""The hf suite's reviewed table of the most-used architectures it reports on their own
(most_used.json). The cases transformers itself cannot run are the suite's own skip list
(not_runnable.json), which the harness reads as it reads every skip list."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import transformers

from suitelib.tiny_models import causal_lm_architectures

HERE = Path(__file__).resolve().parent
MOST_USED_FILE = HERE / "most_used.json"


@cache
def most_used() -> list[str]:
    """most_used.json, checked: every name a causal-LM architecture of the installed transformers."""
    names = json.loads(MOST_USED_FILE.read_text())["architectures"]
    unknown = [n for n in names if n not in causal_lm_architectures()]
    if unknown:
        raise ValueError(f"{MOST_USED_FILE}: {unknown} not causal-LM architectures of transformers "
                         f"{transformers.__version__}")
    return names
