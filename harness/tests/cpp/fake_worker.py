"""A stand-in worker speaking the harness protocol, for the scheduler's tests (no torch).

Cases are t/<behaviour>/-/-: ok (pass), fail (fail), crash (SIGSEGV), abort (SIGABRT),
exit (exits with code 7), hang (sleeps), garbage (prints a non-JSON line), wrongid. With
--zygote it forks its serving workers through harness/worker/zygote.py, as the real worker does.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))
import zygote  # noqa: E402


def serve(out, requests):
    for line in requests:
        answer(out, json.loads(line)["case"])


def serving(out, requests, hello):
    out.write(json.dumps(hello) + "\n")
    out.flush()
    serve(out, requests)


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
    elif behaviour == "garbage":
        print("this is not json", file=out, flush=True)
        return
    outcome = {"ok": "pass", "fail": "fail"}.get(behaviour, "pass")
    answered = "t/other/-/-" if behaviour == "wrongid" else case
    print(json.dumps({"case": answered, "outcome": outcome, "duration": 0.001,
                      "evidence": {"pid": os.getpid()}, "native_ops": {"aten::add.Tensor": 1},
                      "fallback_ops": {}}), file=out, flush=True)


hello = {"ready": True, "pid": os.getpid(), "startup_seconds": 0.01}
print(json.dumps(hello), flush=True)


if "--zygote" in sys.argv:
    zygote.run(sys.stdout, hello, {"serve": serving})
else:
    serve(sys.stdout, sys.stdin)
