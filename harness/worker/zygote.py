"""The worker zygote: a process that has imported torch, the backend and the suite, and forks
workers on request (the run's listing worker and its serving workers), so that a worker (the
listing, a fresh one after a crash or a timeout, or for a rerun) costs a fork instead of seconds
of imports. The harness side is harness/src/execute/Zygote.cpp.

Protocol, one JSON object per line: the harness writes {"spawn": {"stdin", "stdout", "stderr",
"mode"}} (two FIFOs, a log file, and what the worker does: "serve" cases, or "list" the suite)
on the zygote's stdin; the zygote forks, answers {"spawned": PID}, and later {"exited": PID,
"signal": N} or {"exited": PID, "code": N} when that worker ends. The forked worker dies with
the zygote (PR_SET_PDEATHSIG), opens its stdin FIFO, then its results FIFO, and runs its mode,
which says hello there first. The zygote never touches the device, so its children can.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
import time
import traceback
from typing import Any, Callable, TextIO

Mode = Callable[[TextIO, TextIO, dict[str, Any]], None]  # (results stream, requests stream, hello)


def _emit(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def _report_exits(out: TextIO) -> None:
    """Reaps the children that ended and tells the harness how each one ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        how = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.waitstatus_to_exitcode(status)}
        _emit(out, {"exited": pid, **how})


def _become_worker(request: dict[str, str], hello: dict[str, Any], modes: dict[str, Mode], zygote_pid: int,
                   requested: float) -> None:
    """In the forked child: die with the zygote, take the FIFOs as stdin and results, run the mode."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != zygote_pid:  # the zygote died before the line above
        os._exit(127)
    # Its own process group: when the harness kills the worker, it kills the group, so what a
    # case forked (and left running) goes with it.
    os.setpgid(0, 0)
    requests = os.open(request["stdin"], os.O_RDONLY)
    results = os.open(request["stdout"], os.O_WRONLY)
    log = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(requests, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    for fd in (requests, log):
        os.close(fd)
    sys.stdin = os.fdopen(0, "r")
    out = os.fdopen(results, "w", buffering=1)
    mode = modes[request.get("mode", "serve")]
    mode(out, sys.stdin, {**hello, "pid": os.getpid(), "startup_seconds": time.perf_counter() - requested, "forked": True})


def run(out: TextIO, hello: dict[str, Any], modes: dict[str, Mode]) -> None:
    """Forks a worker for each spawn request on stdin (in the request's mode, one of `modes`),
    until the harness closes it."""
    me, pending = os.getpid(), b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.05)
        _report_exits(out)
        if not readable:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            return  # the harness is done; its workers end with their own requests
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not line.strip():
                continue
            request, requested = json.loads(line)["spawn"], time.perf_counter()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    out.close()  # the control stream is the zygote's, not the child's
                    _become_worker(request, hello, modes, me, requested)
                    code = 0
                except SystemExit as exit_:
                    code = exit_.code if isinstance(exit_.code, int) else 1
                except BaseException:  # whatever it was, say it and end the child
                    traceback.print_exc()
                finally:
                    sys.stderr.flush()
                    os._exit(code)
            _emit(out, {"spawned": pid})
