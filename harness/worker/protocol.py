"""The line protocol the harness's Python programs speak to the C++ side: JSON objects, one a line,
on the process's original stdout. Anything else written to stdout (by tests, a model's own prints or
C code) goes to stderr instead, so it cannot corrupt the stream.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
from typing import Any, TextIO


def protocol_stream() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 then points at stderr."""
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def strict_json(value: Any) -> Any:
    """JSON has no inf or nan: non-finite floats travel as the strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(item) for item in value]
    return value


_writing = threading.Lock()  # a worker's threads (compile_progress.py) write whole lines


def emit(stream: TextIO, message: dict[str, Any], **dump_options: Any) -> None:
    """One message of the protocol: a line of strict JSON."""
    line = json.dumps(strict_json(message), allow_nan=False, **dump_options) + "\n"
    with _writing:
        stream.write(line)
