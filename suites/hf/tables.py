"""The hf suite's reviewed tables: the cases transformers itself cannot run (not_runnable.json)
and the most-used architectures it reports on their own (most_used.json)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import transformers

from suitelib.tiny_models import causal_lm_architectures

HERE = Path(__file__).resolve().parent
NOT_RUNNABLE_FILE = HERE / "not_runnable.json"
MOST_USED_FILE = HERE / "most_used.json"


@cache
def not_runnable() -> dict[tuple[str, str, str], str]:
    """not_runnable.json, checked: (architecture, dtype, check) -> why transformers cannot
    run that case on any device; each field a name the suite lists, or "*"."""
    from .suite import DTYPES, SUITE  # the suite's own names; the suite imports this module first

    data = json.loads(NOT_RUNNABLE_FILE.read_text())["not_runnable"] if NOT_RUNNABLE_FILE.is_file() else {}
    known = (causal_lm_architectures(), DTYPES, SUITE.checks)
    out: dict[tuple[str, str, str], str] = {}
    for key, reason in data.items():
        fields = tuple(key.split("/"))
        if len(fields) != 3 or any(f != "*" and f not in names for f, names in zip(fields, known)) or not reason:
            raise ValueError(f"{NOT_RUNNABLE_FILE}: not_runnable entry '{key}': expected <architecture>/<dtype>/<check> "
                             f"of transformers {transformers.__version__} (or *), with a reason")
        out[fields] = reason
    return out


def why_not_runnable(arch: str, dtype: str, check: str) -> str | None:
    """The reason of the not_runnable entry that covers the case, if one does."""
    return next((reason for fields, reason in not_runnable().items()
                 if all(f in ("*", v) for f, v in zip(fields, (arch, dtype, check)))), None)


@cache
def most_used() -> list[str]:
    """most_used.json, checked: every name a causal-LM architecture of the installed transformers."""
    names = json.loads(MOST_USED_FILE.read_text())["architectures"]
    unknown = [n for n in names if n not in causal_lm_architectures()]
    if unknown:
        raise ValueError(f"{MOST_USED_FILE}: {unknown} not causal-LM architectures of transformers "
                         f"{transformers.__version__}")
    return names
