"""A stand-in worker speaking the harness protocol, for the scheduler's tests (no torch).

Cases are t/<behaviour>/-/-: ok (pass), fail (fail), crash (SIGSEGV), abort (SIGABRT),
exit (exits with code 7), hang (sleeps), garbage (prints a non-JSON line), wrongid.
"""

import json
import os
import signal
import sys
import time

print(json.dumps({"ready": True, "pid": os.getpid(), "startup_seconds": 0.01}), flush=True)
for line in sys.stdin:
    case = json.loads(line)["case"]
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
        print("this is not json", flush=True)
        continue
    outcome = {"ok": "pass", "fail": "fail"}.get(behaviour, "pass")
    answer = "t/other/-/-" if behaviour == "wrongid" else case
    print(json.dumps({"case": answer, "outcome": outcome, "duration": 0.001,
                      "evidence": {"pid": os.getpid()}, "native_ops": {"aten::add.Tensor": 1},
                      "fallback_ops": {}}), flush=True)
