"""The harness's Python processes end without the interpreter's teardown (quick_exit.py), and
still end as Python would have: the same exit code, exit handlers run, nothing written lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[1] / "worker"


def ended(body: str) -> subprocess.CompletedProcess[str]:
    script = ("import atexit, sys\n"
              "from quick_exit import run_main\n"
              "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
              f"def main():\n{body}\n"
              "run_main(main)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(WORKER)})


@pytest.mark.parametrize("body, code", [
    ("    print('out', end='')", 0),
    ("    print('out', end=''); sys.exit(3)", 3),
    ("    print('out', end=''); sys.exit(None)", 0),
])
def test_the_code_is_python_s_and_nothing_written_is_lost(body: str, code: int) -> None:
    done = ended(body)
    assert (done.returncode, done.stdout) == (code, "out")
    assert "exit handler ran" in done.stderr


def test_an_exception_or_a_message_ends_with_1_and_says_why() -> None:
    raised = ended("    raise KeyError('the reason')")
    assert raised.returncode == 1 and "KeyError: 'the reason'" in raised.stderr
    assert "exit handler ran" in raised.stderr
    said = ended("    sys.exit('the message')")
    assert said.returncode == 1 and "the message" in said.stderr
