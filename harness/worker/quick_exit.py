"""How the harness's Python processes end: without tearing the interpreter down.

Freeing torch's and the test machinery's objects one by one at exit (and their C++ operator
registrations) takes a second or more, which the harness would wait for at every listing,
zygote, rank and check-model process. Exit handlers still run and the standard streams are
flushed; a stream a process opened itself must be line-buffered or flushed by its owner.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from typing import Callable, NoReturn


def end_process(code: int) -> NoReturn:
    """Exit handlers, the standard streams flushed, then the process ends with `code`."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


def run_main(main: Callable[[], object]) -> NoReturn:
    """main(), then the end of the process with the code Python would have exited with."""
    try:
        main()
    except SystemExit as exc:  # sys.exit(3), or sys.exit("message") as Python prints it
        if exc.code is None or isinstance(exc.code, int):
            end_process(exc.code or 0)
        print(exc.code, file=sys.stderr)
        end_process(1)
    except BaseException:  # noqa: B902 - as Python's own top level: the traceback, then 1
        traceback.print_exc()
        end_process(1)
    end_process(0)
