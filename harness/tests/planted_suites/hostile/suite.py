"""A planted suite whose cases attack the worker's line protocol and the machine's memory, each
followed by a calm case: the harness must record each attack clearly (error where the harness
saw it, or crash), replace the worker, lose nothing and go on (harness/tests/test_hostile_workers.py).

The protocol stream is the worker's private copy of its original stdout; like native code writing
to a stray file descriptor, these cases find it as the FIFO the worker holds open for writing.
"""

from __future__ import annotations

import json
import os
import stat
import time

import torch

import suite_api
from sides import Verdict
from vocabulary import EVIDENCE_CORE

CHECK = "misbehave"
ATTACKS = (
    "garbage_line",         # a line that is not JSON, then its real result
    "partial_line_exit",    # half a line, then the process exits
    "huge_line",            # one line of 100 MB
    "invalid_utf8",         # bytes that are not UTF-8
    "wrong_types",          # a result line whose fields have the wrong JSON types
    "other_case",           # a well-formed result for a case it was not given
    "fork_writes_later",    # a forked child writes to the stream after the case returned
    "closes_protocol",      # closes the protocol stream: its result cannot be written
    "floods_and_sleeps",    # 20 MB without a newline, then sleeps with the stream blocked
    "allocates_forever",    # allocates until the worker memory limit stops it
    "device_allocates_forever",  # the same on the device, whose memory is the host's
    "device_out_of_memory", # the device's pool is full: the backend's answer, not the limit's
    "hoards",               # passes, but keeps most of the memory limit: the worker must retire
    "breaks_evidence_core", # fails with every core field of its evidence of another type
)
HOARD: list = []  # what "hoards" keeps alive after its case, as a worker's caches would


SUITE = suite_api.Suite(__name__, noun="attack", nouns="attacks")
SUITE.makes_cases(suite_api.Case)


@SUITE.lists
def list_cases():
    for attack in ATTACKS:
        yield from [(attack, "-", CHECK), (f"calm_after_{attack}", "-", CHECK)]


def protocol_fd() -> int:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            flags = next(line for line in open(f"/proc/self/fdinfo/{fd}") if line.startswith("flags:"))
        except (OSError, StopIteration):
            continue
        if int(flags.split()[1], 8) & os.O_ACCMODE == os.O_WRONLY:
            return fd
    raise RuntimeError("no protocol stream found")


def write(data: bytes) -> None:
    fd = protocol_fd()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def harness_peak_rss_kb() -> int:
    """VmHWM of the harness: the parent of the zygote that forked this worker."""
    zygote = os.getppid()
    harness = int(open(f"/proc/{zygote}/stat").read().rsplit(")", 1)[1].split()[1])
    status = open(f"/proc/{harness}/status").read()
    return int(status.split("VmHWM:")[1].split()[0])


@suite_api.check(CHECK, "misbehaves on the worker's protocol stream or memory")
def misbehave(case) -> None:
    case_id, ctx = str(case.id), case.ctx
    attack = case.id.subject
    if attack.startswith("calm_after_"):
        if attack == "calm_after_fork_writes_later":
            time.sleep(1.5)  # running when the child left by the case before writes its line
        (torch.ones(3, device=ctx.device) + 1).cpu()
        case.evidence.update(pid=os.getpid(), harness_peak_rss_kb=harness_peak_rss_kb())
        return
    if attack == "garbage_line":
        write(b"this is not a result\n")
    elif attack == "partial_line_exit":
        write(b'{"case": "hostile/')
        os._exit(3)
    elif attack == "huge_line":
        write(b"x" * (100 << 20) + b"\n")
    elif attack == "invalid_utf8":
        write(b'{"case": "\xff\xfe", "outcome": "pass"}\n')
    elif attack == "wrong_types":
        write(json.dumps({"case": case_id, "outcome": 7, "duration": "soon", "evidence": "none"}).encode() + b"\n")
    elif attack == "other_case":
        other = f"{SUITE.name}/calm_after_other_case/-/{CHECK}"
        write(json.dumps({"case": other, "outcome": "pass", "duration": 0.0}).encode() + b"\n")
    elif attack == "fork_writes_later":
        fd = protocol_fd()
        child = os.fork()
        if child == 0:  # outlives its case: only the worker's process group takes it down
            time.sleep(0.5)
            os.write(fd, b"a late line from a forked child\n")
            time.sleep(600)
            os._exit(0)
        case.evidence["child_pid"] = child
        return
    elif attack == "closes_protocol":
        os.close(protocol_fd())
    elif attack == "floods_and_sleeps":
        write(b"y" * (20 << 20))
        time.sleep(600)
    elif attack in ("allocates_forever", "device_allocates_forever"):
        device = ctx.device if attack.startswith("device") else "cpu"
        hoard = []
        while True:
            hoard.append(torch.ones(32 << 20, dtype=torch.float32, device=device))  # 128 MiB a step
    elif attack == "hoards":
        HOARD.append(torch.ones(288 << 20, dtype=torch.float32))  # 1,152 MiB: alone over half of 2 GiB
        case.evidence["pid"] = os.getpid()
        return
    elif attack == "breaks_evidence_core":
        broken = {name: {"sample_index": 3} if kind == "string" else "one" for name, kind in EVIDENCE_CORE.items()}
        raise Verdict("fail", {**broken, "kept": "a detail"})
    elif attack == "device_out_of_memory":
        raise torch.OutOfMemoryError("neuron out of memory: tried to allocate 8.00 GiB (device pool full)")
