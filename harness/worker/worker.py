"""The worker side of neuron-conform: one process that runs cases and streams results.

The C++ orchestrator (build/neuron-conform) starts workers, hands each one case at a time and
reads one JSON line back per case. It owns planning, scheduling, timeouts and crash isolation;
a worker only imports the backend, then PyTorch's test machinery, and runs what it is given.

Modes:
  --list            print the suite's declaration ({"description": SUITE.describe()}), then every
                    case of the suite as a JSON line, then {"done": N}; its hello line also carries
                    "cpu_overloads" and "device_composite" (overloads.py), which the run stores
                    for the ledger
  --suites          print {"ready": ...}, then one line per suite found (suite_api.find_suites()):
                    {"suite", "folder", "description", "reviewed": {"readers"}} or {"suite",
                    "folder", "problem"}, then {"done": N}
  --reviewed        as --suites, with each suite's reviewed documents read and checked (their
                    readers' problems in "reviewed"): what skiplist lint and stale report
  --overloads       print {"ready": ..., "torch": ...}, then {"overloads": [...], "device_composite":
                    [...]}: the installed torch's aten overloads with a CPU kernel (the ledger's
                    rows), and those a composite kernel serves on the device; no suite is loaded
  --serve           read {"case": ID} lines on stdin, answer one result line each. The device is
                    waited on before each case: an error it raises then (work an earlier case
                    queued) is answered {"case": ID, "late_error": {...}, "retiring": true}
                    instead of running the case, and once more when the requests end
                    ({"late_error": {...}}, "surfaced_at": "worker exit"); a case whose error left
                    the device failing retires its worker. While a case compiles, the worker
                    writes {"compiling": {"case": ID, "seconds": S}} as S grows (compile_progress.py):
                    the harness does not count that time against the case's timeout
  --blocking        with --serve or --repro: every device op runs at its call (the zygote's
                    "serve_blocking" mode does the same for a forked worker)
  --api             print the hello, then {"api": ...}: the suite's public_api() (harness/worker/suitelib/public_api.py:
                    the public names each subject tests, and whether in eager mode or under torch.compile), or
                    null when the suite declares none
  --repro CASE_ID   run one case verbosely (full traceback) and print its result
  --zygote          after the imports, fork workers on request ({"spawn": {"stdin", "stdout",
                    "stderr", "mode"}} on stdin: two FIFOs, a log, and "serve" or "list": the
                    run's listing comes from a fork too), answering {"spawned": PID},
                    and report each one's end ({"exited": PID, "signal" | "code"}): a fresh worker
                    costs a fork, not the seconds of importing torch and the test machinery. The
                    zygote never touches the device, so its children can.

The protocol (protocol.py) uses the process's original stdout; anything else written to stdout
(by tests or C code) is redirected to stderr so it cannot corrupt the stream.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import re
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

import backend_contract
import device_memory
import sides
import suite_api
import zygote
from case_context import Context, compile_cache_delta, ops_field
from compile_progress import CompileProgress
from evidence import core_problems, exception_evidence
from overloads import cpu_overloads, device_composites
from protocol import emit, protocol_stream, strict_json
from quick_exit import run_main
from vocabulary import EXIT_MEMORY_LIMIT, MATCHED, Outcome, Route, Where


def run_one(suite: suite_api.Suite, ctx: Context, case_id: str, verbose: bool = False,
            tolerance: dict[str, Any] | None = None) -> dict[str, Any]:
    """One case, with the reviewed tolerance the harness gave with it (a skip list's tolerance
    entry), if any: whether the case compared anything with it is part of the evidence."""
    start = time.perf_counter()
    ctx.clear_tracking()
    ctx.tolerance_given, ctx.tolerance_applied = tolerance, False
    cache_before = ctx.compile_cache()
    memory_before = ctx.memory() if ctx.memory else None
    try:
        with ctx.capture:
            outcome, evidence = suite.run_case(case_id, ctx)
            outcome, evidence = surfaced_at_end(ctx, outcome, evidence)
    except Exception as exc:  # a bug in the suite itself, not in the backend
        if verbose:
            traceback.print_exc()
        outcome = Outcome.ERROR
        evidence = {**exception_evidence(exc), "where": Where.HARNESS, "traceback": traceback.format_exc()[-4000:]}
        evidence.pop("failing_op", None)  # the suite failed, not an op of the backend
    if problems := core_problems(evidence):  # a suite's bug, which the reports would not see
        outcome, evidence = Outcome.ERROR, {
            "exception_type": "EvidenceError", "where": Where.HARNESS, "suite_evidence": evidence,
            "message": f"the suite's evidence breaks the core's types: {'; '.join(problems)}"}
    ops = ctx.tracked_ops()
    if outcome == Outcome.PASS and evidence.get("values_not_compared"):
        outcome = Outcome.UNVERIFIED  # what was not compared is not a pass, whichever suite says so
    if outcome == Outcome.PASS and ops[ops_field(Route.FALLBACK)]:
        outcome = Outcome.FALLBACK  # matched, but not every op ran on the device
    elif outcome == Outcome.PASS and ops[ops_field(Route.HOST_ONLY)]:
        outcome = Outcome.HOST_ONLY  # matched, every op in the backend's kernels, some on the host
    elif outcome == Outcome.PASS and ctx.route_unknown():
        outcome = Outcome.NATIVE_UNKNOWN  # matched; never called native without seeing it
    evidence.update(ctx.observation(ops))
    if tolerance is not None:  # a reviewed tolerance no comparison used is an entry to fix
        evidence["tolerance_given"] = {**tolerance, "applied": ctx.tolerance_applied}
    if cache_after := ctx.compile_cache():
        evidence["compile_cache"] = compile_cache_delta(cache_before, cache_after)
    if memory_before is not None:
        outcome = balance(suite, ctx, case_id, outcome, evidence, memory_before)
    return {
        "case": case_id,
        "outcome": outcome,
        "duration": time.perf_counter() - start,
        "evidence": evidence,
        **ops,
    }


def surfaced_at_end(ctx: Context, outcome: str, evidence: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The case ends waiting for the device's queued work, inside its own attribution: an error
    an asynchronous device raises only now is the case's, never the next case's."""
    late = late_error(ctx, "case end")
    if late is None or outcome == Outcome.ERROR:  # a case's own error came first: it stands
        return outcome, evidence
    return Outcome.ERROR, {**evidence, **late, "outcome_before": outcome}


def late_error(ctx: Context, surfaced_at: str) -> dict[str, Any] | None:
    """What the device raises when waited on outside any case (before a case starts, at the
    worker's exit): an error of work an earlier case queued, which the harness attributes by
    rerunning the candidates (Scheduler). None when the device is clean."""
    try:
        ctx.synchronize()
    except Exception as exc:  # noqa: BLE001 - the device's error, not this process's
        return {**exception_evidence(exc), "surfaced_at": surfaced_at}
    return None


LAUNCH_BLOCKING = "set_launch_blocking"  # the backend's switch: every op runs at its call


def launch_blocking(backend: Any) -> None:
    """Makes the device run each op at its call, so that an op's error is raised by the op
    (a late error's attribution reruns candidates so); the worker refuses when the backend has
    no such switch."""
    switch = getattr(backend, LAUNCH_BLOCKING, None)
    if not callable(switch):
        raise SystemExit(f"the backend declares no launch-blocking switch ({LAUNCH_BLOCKING}(); docs/backends.md)")
    switch(True)


def balance(suite: suite_api.Suite, ctx: Context, case_id: str, outcome: str, evidence: dict[str, Any],
            before: int) -> str:
    """The case's resource balance (device_memory.py): its outcome, made `fail` when the case
    matched but each run of it keeps device memory allocated after its tensors are gone."""
    if ctx.memory() <= before or ctx.memory.settled(generation=1) <= before:
        return outcome  # the common case: nothing, or only the case's own reference cycles, held memory
    grown = ctx.memory.settled() - before  # older garbage may hold it: a full collection
    if grown <= 0:
        return outcome
    # Once more, with each op's allocations watched: a cache warming up does not grow again.
    again = ctx.memory()
    watch = device_memory.AllocationWatch(ctx.device.split(":")[0], ctx.memory)
    try:
        with watch:
            suite.run_case(case_id, ctx)
    except Exception:  # noqa: BLE001 - the first run's outcome stands; only the memory is measured
        pass
    if ctx.memory.settled(generation=1) <= again or ctx.memory.settled() <= again:
        return outcome
    regrown = ctx.memory() - again
    kept = dict(sorted(watch.kept.items(), key=lambda item: -item[1])[:5])
    evidence["device_memory"] = {"first_run_growth": grown, "second_run_growth": regrown, "kept_by_op": kept}
    if outcome not in MATCHED:
        return outcome
    op = next(iter(kept), None)
    evidence["message"] = (f"device memory leaked: {regrown} bytes stayed allocated after each run of the case "
                           f"({grown} after the first), its tensors gone"
                           + (f"; calls of {op} kept {kept[op]} bytes beyond their results" if op else ""))
    evidence["property"] = "resource balance"
    if op:
        evidence["failing_op"] = op
    return Outcome.FAIL


# The oldest torch whose testing machinery (OpInfo, ModuleInfo, OptimizerInfo, instantiate_device_type_tests
# for PrivateUse1) the suites are written against.
OLDEST_TORCH = (2, 8)


def release(version: str) -> tuple[int, ...]:
    """'2.13.0+cpu' -> (2, 13): the release a torch version belongs to."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", help="the suite to load (default: suite_api.DEFAULT_SUITE)")
    parser.add_argument("--backend-module", required=True, help="the backend's Python module (torch_neuronx, ...)")
    parser.add_argument("--device", help="the device under test (default: the PrivateUse1 backend's name once the "
                                         "backend module is imported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suite-options", default="{}", metavar="JSON",
                        help="options for the suite's configure() (the upstream suite's test folder, ...)")
    parser.add_argument("--max-memory", type=int, default=0, metavar="BYTES",
                        help="each serving worker's memory limit (RLIMIT_DATA); 0: none")
    parser.add_argument("--blocking", action="store_true",
                        help="run every device op at its call (the backend's set_launch_blocking(True))")
    mode = parser.add_mutually_exclusive_group(required=True)
    parser.add_argument("--tolerance", metavar="JSON",
                        help="with --repro: the reviewed tolerance the run gave the case "
                             "(its evidence's tolerance_given)")
    mode.add_argument("--list", action="store_true")
    mode.add_argument("--serve", action="store_true")
    mode.add_argument("--repro", metavar="CASE_ID")
    mode.add_argument("--zygote", action="store_true")
    mode.add_argument("--overloads", action="store_true")
    mode.add_argument("--suites", action="store_true")
    mode.add_argument("--reviewed", action="store_true")
    mode.add_argument("--api", action="store_true")
    args = parser.parse_args()

    out = protocol_stream()
    started = time.perf_counter()
    # The backend must be imported before torch.testing._internal (device-type machinery).
    import torch

    if release(torch.__version__) < OLDEST_TORCH:
        emit(out, {"fatal": f"torch {torch.__version__} is older than {'.'.join(map(str, OLDEST_TORCH))}, "
                            "the oldest torch neuron-conform runs with"})
        sys.exit(3)

    try:
        backend = importlib.import_module(args.backend_module)
    except Exception as exc:
        emit(out, {"fatal": f"cannot import backend module '{args.backend_module}': "
                                       f"{type(exc).__name__}: {exc}"
                                       + (f" (caused by {type(exc.__cause__).__name__}: {exc.__cause__})"
                                          if exc.__cause__ else "")})
        sys.exit(3)
    sides.seed_no_absent_accelerator()
    if args.overloads:  # needs no suite: only what the dispatcher has registered
        emit(out, {"ready": True, "pid": os.getpid(), "torch": torch.__version__})
        names = cpu_overloads()
        emit(out, {"overloads": names, "device_composite": device_composites(names)})
        return

    if args.suites or args.reviewed:  # every suite found, described: no case listed, nothing configured
        emit(out, {"ready": True, "pid": os.getpid(), "torch": torch.__version__})
        found = suite_api.find_suites()
        for name, folder in found.items():
            emit(out, describe_found(name, folder, args.reviewed))
        emit(out, {"done": len(found)})
        return

    args.suite = args.suite or suite_api.DEFAULT_SUITE
    try:
        suite = suite_api.load_suite(args.suite)
    except (ImportError, AttributeError) as exc:  # most often a torch without what the suite uses
        emit(out, {"fatal": f"suite '{args.suite}' does not load with torch {torch.__version__}: "
                            f"{type(exc).__name__}: {exc}"})
        sys.exit(3)
    except ValueError as exc:  # the suite's declaration is wrong: say what, in one line
        emit(out, {"fatal": f"suite '{args.suite}' cannot list its cases: {exc}"})
        sys.exit(3)
    device = args.device or torch._C._get_privateuse1_backend_name()
    backend_contract.declare(args.backend_module, backend, device)
    try:
        options = suite.configure(json.loads(args.suite_options))
    except ValueError as exc:  # the options are wrong: say what, in one line
        emit(out, {"fatal": str(exc)})
        sys.exit(3)
    ctx = Context(backend, device, args.seed)
    hello = {
        "ready": True,
        "pid": os.getpid(),
        "torch": torch.__version__,
        "backend_module": args.backend_module,
        "backend_version": str(getattr(backend, "__version__", "unknown")),
        "startup_seconds": time.perf_counter() - started,
        "device": device,
        "tracking": ctx.tracking,
        "device_memory": ctx.memory is not None,  # whether each case's resource balance is checked
        "op_sources": sorted({"dispatcher", ctx.ops_source}),
        "capture": ctx.capture_kind,  # the dispatcher's account: "native" (C++) or "python (why)"
        "native_ops": sorted(backend.native_ops()) if callable(getattr(backend, "native_ops", None)) else None,
        # whether the backend can run every op at its call (the run's --blocking, and how a late
        # error is attributed: docs/backends.md)
        "launch_blocking": callable(getattr(backend, LAUNCH_BLOCKING, None)),
    }
    def listing(results: TextIO, _requests: TextIO, hello: dict[str, Any]) -> None:
        list_suite(results, hello, args.suite, suite, options)

    def serving(results: TextIO, requests: TextIO, hello: dict[str, Any]) -> None:
        emit(results, hello)
        serve(results, suite, ctx, requests, args.max_memory)

    def serving_blocking(results: TextIO, requests: TextIO, hello: dict[str, Any]) -> None:
        launch_blocking(backend)
        serving(results, requests, hello)

    if args.list:
        listing(out, sys.stdin, hello)
        return
    if args.blocking:
        launch_blocking(backend)
    if args.serve:
        serving(out, sys.stdin, hello)
        return
    emit(out, hello)
    if args.api:  # the public API the suite's subjects test (public_api.py), or null
        emit(out, {"api": suite.public_api()})
        return
    if args.repro:
        result = run_one(suite, ctx, args.repro, verbose=True, tolerance=json.loads(args.tolerance or "null"))
        emit(out, result, indent=2)
        sys.exit(0 if result["outcome"] in MATCHED else 1)
    zygote.run(out, hello, {"serve": serving, "serve_blocking": serving_blocking, "list": listing})


def list_suite(out: TextIO, hello: dict[str, Any], name: str, suite: suite_api.Suite, options: dict[str, Any]) -> None:
    """--list: the hello with the CPU overloads (the ledger's rows), the suite's declaration, its
    cases, {"done": N}. The first problem of the suite's own data ends the process with it."""
    names = cpu_overloads()
    emit(out, {**hello, "cpu_overloads": names, "device_composite": device_composites(names)})
    count = 0
    try:
        emit(out, {"suite": name, "description": suite.describe(), "options": options})
        for case in suite.list_cases():
            emit(out, case)
            count += 1
    except (ValueError, KeyError) as exc:  # the suite's own data is wrong: say what, in one line
        emit(out, {"fatal": f"suite '{name}' cannot list its cases: {exc}"})
        sys.exit(3)
    except (ImportError, AttributeError) as exc:  # most often a torch without what the suite uses
        emit(out, {"fatal": f"suite '{name}' cannot list its cases with torch {hello['torch']}: "
                            f"{type(exc).__name__}: {exc}"})
        sys.exit(3)
    emit(out, {"done": count})


def describe_found(name: str, folder: Path, check_reviewed: bool) -> dict[str, Any]:
    """A found suite's declaration, or why it cannot be loaded; and the reviewed documents its
    modules read (those whose readers its loading declared first), with what is wrong in them
    where `check_reviewed` (reading them all costs seconds: facts are checked against samples)."""
    from suitelib import reviewed

    before = set(reviewed.readers())
    try:
        found = {"suite": name, "folder": str(folder), "description": suite_api.load_suite(name).describe()}
    except (Exception, SystemExit) as exc:  # one broken suite must not hide the others
        return {"suite": name, "folder": str(folder), "problem": f"{type(exc).__name__}: {str(exc)[:500]}"}
    readers = [r for r in reviewed.readers() if r not in before]
    checked = {"problems": reviewed.problems(readers)} if check_reviewed else {}
    return {**found, "reviewed": {"readers": readers, **checked}}


# What a host allocation that failed says, in the evidence of the case that asked for it: Python's
# MemoryError, c10's CPU allocator, C++'s std::bad_alloc, the C library's ENOMEM. Not a device's
# OutOfMemoryError: a full device pool is the backend's behaviour, judged as such.
_OUT_OF_MEMORY = re.compile(r"\bMemoryError\b|can't allocate memory|bad_alloc|Cannot allocate memory")


def limit_memory(max_memory: int) -> None:
    """This worker's memory limit, and the kernel's OOM killer told to pick it before anything else
    (the harness above all) when memory runs out anyway."""
    if max_memory > 0:
        # RLIMIT_DATA counts the heap and private anonymous mappings: what tensors use. (RLIMIT_AS
        # would also count reserved-but-unused address space, which grows with threads.)
        resource.setrlimit(resource.RLIMIT_DATA, (max_memory, max_memory))
    try:
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass


def out_of_memory(result: dict[str, Any]) -> bool:
    """Whether a case failed because an allocation failed: under a limit, the limit was reached."""
    return result["outcome"] not in MATCHED and bool(_OUT_OF_MEMORY.search(json.dumps(result["evidence"], default=str)))


def data_bytes() -> int:
    """What RLIMIT_DATA holds this process to now (VmData: heap and private mappings); 0 where
    /proc does not say."""
    try:
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmData:"))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError):
        return 0


def serve(out: TextIO, suite: suite_api.Suite, ctx: Context, requests: TextIO, max_memory: int = 0) -> None:
    """One result line for each {"case": ID} line, until the harness closes the requests. A case
    that ran out of memory under the limit ends the worker (EXIT_MEMORY_LIMIT, its result on
    stderr): its heap may be left in pieces, and the harness records the case as a crash.

    A worker whose memory has grown past half its limit after a case retires: its result says
    "retiring" and it ends, and the harness gives the next case a fresh worker. Memory a worker
    keeps from case to case (allocator pools, compiled code, the test machinery's caches) would
    otherwise leave a later case less than the limit promises, and it would crash there."""
    limit_memory(max_memory)
    # What is alive now (torch, the test machinery, the suite's database: hundreds of thousands of
    # objects) lives as long as the worker: kept out of the collector's reach, so that the full
    # collections a case triggers, and resource balance's own, scan only what cases allocate.
    gc.collect()
    gc.freeze()
    # The harness gives a case compile time beyond its timeout, as the backend's counters show it
    progress = CompileProgress(out, ctx.compile_cache) if ctx.compile_cache() else None
    for line in requests:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        # Work an earlier case queued may fail only now: not this case's error. The harness
        # attributes it and gives this case a fresh worker.
        if late := late_error(ctx, "next case start"):
            emit(out, {"case": request["case"], "late_error": late, "retiring": True})
            return
        with progress.case(request["case"]) if progress else contextlib.nullcontext():
            result = run_one(suite, ctx, request["case"], tolerance=request.get("tolerance"))
        if result["outcome"] == Outcome.ERROR and (stuck := late_error(ctx, "after the case")):
            # the device keeps failing after the case's error: no later case could trust it
            result["evidence"]["device_error_state"] = stuck["message"]
            emit(out, {**result, "retiring": True})
            return
        if max_memory > 0 and out_of_memory(result):
            print(f"worker: {request['case']} exceeded the memory limit ({max_memory} bytes):",
                  json.dumps(strict_json(result["evidence"]))[:4000], file=sys.stderr, flush=True)
            os._exit(EXIT_MEMORY_LIMIT)
        if max_memory > 0 and data_bytes() > max_memory // 2:
            emit(out, {**result, "retiring": True})
            break
        emit(out, result)
    if late := late_error(ctx, "worker exit"):  # the harness closed the requests: a last wait
        emit(out, {"late_error": late})


if __name__ == "__main__":
    run_main(main)
