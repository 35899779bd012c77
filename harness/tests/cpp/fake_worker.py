"""A stand-in worker speaking the harness protocol, for the scheduler's tests (no torch).

Cases are t/<behaviour>/-/-: ok (pass), fail (fail), crash (SIGSEGV), abort (SIGABRT),
exit (exits with code 7), hang (sleeps), garbage (prints a non-JSON line), wrongid, and
compile/<S>/- (compiles for S seconds, or forever, telling the harness as compile_progress.py
does, then passes), flood (writes progress lines without pause, no compile time in them, and
never answers), badprogress (a progress line whose case is no string, then its answer). With
--zygote it forks its serving workers through harness/worker/zygote.py, as the real worker does.

An asynchronous device's late errors, as worker.py reports them:
  late         passes, but leaves an error the device raises when next waited on: before the
               worker's next case ("late_error" instead of its answer) or at its exit
  late_inside  passes, but the worker's next case fails with its error
Both fail at the call in the "serve_blocking" mode, as an op does on a device run blocking.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))
import zygote  # noqa: E402


BLOCKING = False
pending = None  # the error the device raises when next waited on
inside = None  # the error the next case meets


def late(case):
    return {"exception_type": "RuntimeError", "message": f"aten::late.default failed on the device ({case})"}


def serve(out, requests):
    global pending
    for line in requests:
        case = json.loads(line)["case"]
        if pending:
            print(json.dumps({"case": case, "late_error": {**pending, "surfaced_at": "next case start"},
                              "retiring": True}), file=out, flush=True)
            return
        answer(out, case)
    if pending:
        print(json.dumps({"late_error": {**pending, "surfaced_at": "worker exit"}}), file=out, flush=True)


def serving(out, requests, hello):
    out.write(json.dumps(hello) + "\n")
    out.flush()
    serve(out, requests)


def serving_blocking(out, requests, hello):
    global BLOCKING
    BLOCKING = True
    serving(out, requests, hello)


def compile_for(out, case, seconds):
    start = time.monotonic()
    while (spent := time.monotonic() - start) < seconds:
        print(json.dumps({"compiling": {"case": case, "seconds": spent}}), file=out, flush=True)
        time.sleep(0.1)


def answer(out, case):
    behaviour = case.split("/")[1]
    if behaviour == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif behaviour == "abort":
        sys.stderr.write("about to abort\n")
        sys.stderr.flush()
        os.abort()
    elif behaviour == "exit":
        sys.exit(7)
    elif behaviour == "hang":
        time.sleep(3600)
    elif behaviour == "compile":
        compile_for(out, case, float(case.split("/")[2]))
    elif behaviour == "flood":
        while True:
            print(json.dumps({"compiling": {"case": case, "seconds": 0}}), file=out, flush=True)
    elif behaviour == "badprogress":
        print(json.dumps({"compiling": {"case": 1, "seconds": 1}}), file=out, flush=True)
    elif behaviour == "garbage":
        print("this is not json", file=out, flush=True)
        return
    global pending, inside
    outcome = {"ok": "pass", "fail": "fail"}.get(behaviour, "pass")
    evidence = {"pid": os.getpid()}
    if inside:
        outcome, evidence, inside = "error", {**evidence, **inside}, None
    elif behaviour in ("late", "late_inside") and BLOCKING:
        outcome, evidence = "error", {**evidence, **late(case), "failing_op": "aten::late.default"}
    elif behaviour == "late":
        pending = late(case)
    elif behaviour == "late_inside":
        inside = late(case)
    answered = "t/other/-/-" if behaviour == "wrongid" else case
    print(json.dumps({"case": answered, "outcome": outcome, "duration": 0.001,
                      "evidence": evidence, "native_ops": {"aten::add.Tensor": 1},
                      "fallback_ops": {}}), file=out, flush=True)


hello = {"ready": True, "pid": os.getpid(), "startup_seconds": 0.01}
print(json.dumps(hello), flush=True)


if "--zygote" in sys.argv:
    zygote.run(sys.stdout, hello, {"serve": serving, "serve_blocking": serving_blocking})
else:
    serve(sys.stdout, sys.stdin)
