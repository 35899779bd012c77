"""The distributed suite: collectives, DDP, FSDP2 and DTensor on the device, across a world of ranks.

Each case runs in a world of N ranks (2 by default, `run --world-size N`): one process per rank
(rank.py), rank k on device <device>:k, in a process group "cpu:gloo,<device>:<its c10d
backend>" whose store this worker serves (world.py). A world is started once and reused across
cases; after any case that did not pass it is killed and the next case starts a new one. Every
rank's result is compared with the same computation on the CPU in this one process (cases.py).

Case ids: distributed/<subject>/<dtype>/world<N>. Subjects:
  all_reduce.{sum,avg,max,min,product}, all_reduce.sum.noncontiguous, broadcast (into a
  non-contiguous view), all_gather, all_gather_into_tensor, reduce_scatter_tensor,
  all_to_all_single, all_to_all_single.uneven, send_recv (a ring), barrier: at float32,
  bfloat16, float16, int32 (barrier: -), each through its async Work's wait()
  ddp.mlp: gradients after backward (equal on every rank, and to one process's gradients of the
  concatenated batch) and parameters after an SGD step
  fsdp2.mlp, fsdp2.llama (the hf suite's tiny LlamaForCausalLM): fully_shard per layer and at the
  root; parameters must be Shard(0) DTensors on the rank's device; three SGD steps, each rank's
  losses and the final full_tensor() parameters against one process over the concatenated batch
  dtensor.distribute, dtensor.redistribute.{shard0_replicate,shard0_shard1,partial_replicate},
  dtensor.add, dtensor.matmul: local shards (on the rank's device) and full tensors
Outcomes: pass / fallback (an aten op of some rank ran through the CPU fallback); fail (a rank's
result differs: the rank and the errors are recorded); error (a rank raised: its exception;
ranks that were then stuck in a collective are named, and the world is replaced). A case that
hangs is the harness's `timeout`: it kills this worker, and the ranks die with it. A rank that
dies makes this worker kill the world and end with the rank's signal or exit code, so the
harness records a `crash` with it. Evidence: world size, collective calls and bytes summed over
the ranks (get_collective_stats(), "unavailable" when the backend has none), the seconds the
world took to start when this case started it, tolerances.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Iterable

import torch

import suite_api
from comparison import Mismatch, compare
from sides import Verdict
from vocabulary import Outcome

from . import cases
from .world import RankDied, World, WorldFailed

DEFAULT_WORLD_SIZE = 2
# (rtol, atol): collectives reduce in another order than one process; training cases also
# reduce gradients in another order (per rank, then across ranks).
TOLERANCES = {"float32": (1.3e-6, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float16": (1e-3, 1e-5), "int32": (0, 0),
              "-": (0, 0)}
TRAINING_TOLERANCE = (1e-4, 1e-5)


class Settings:
    world_size = DEFAULT_WORLD_SIZE


_live: list[World] = []  # the live world, if any


SUITE = suite_api.Suite(
    __name__, noun="distributed API", nouns="collectives and parallel APIs",
    native_phrase=lambda: f"pass natively on {Settings.world_size} ranks at every dtype",
    options={"world_size": {"type": "int", "default": DEFAULT_WORLD_SIZE,
                            "help": "ranks per world, one process and one device each (2 to the backend's device "
                                    "count)"}})


@SUITE.configures
def configure(options: dict[str, Any]) -> None:
    """`world_size`: 2 to the device count. The backend must have registered a c10d backend for its
    device. ValueError names what is wrong (the run stops, exit 2)."""
    import torch.distributed as dist

    device = suite_api.device_type()
    if not dist.is_available():
        raise ValueError("this torch was built without torch.distributed")
    if device not in dist.Backend.default_device_backend_map:
        raise ValueError(f"the backend registers no c10d backend for its device '{device}': the distributed suite "
                         f"needs torch.distributed.Backend.register_backend(name, create, devices=['{device}'])")
    size = options["world_size"]
    devices = torch.get_device_module(device).device_count()
    if not 2 <= size <= devices:
        raise ValueError(f"world_size {size}: a world needs at least 2 ranks and one {device} device per rank; "
                         f"the backend reports {devices} {device} devices")
    Settings.world_size = size


def check() -> str:
    return f"world{Settings.world_size}"


@SUITE.finds_checks
def world_check() -> dict[str, str]:
    """The suite's one check, named after the world's size (an option)."""
    return {check(): f"every rank of a world of {Settings.world_size} processes, one {suite_api.device_type()} device "
                     f"each, against the same computation on the CPU in one process"}


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    return ((subject, dtype, check()) for subject, case in cases.CASES.items() for dtype in case.dtypes)


def _world(ctx) -> tuple[World, float | None]:
    """The live world, or a new one (and the seconds it took to start)."""
    if _live:
        return _live[0], None
    world = World(ctx.backend.__name__, suite_api.device_type(), Settings.world_size)
    _live.append(world)
    return world, world.start_seconds


def _end_world() -> None:
    while _live:
        _live.pop().kill()


def _die_like(died: RankDied) -> None:
    """Ends this worker as the rank ended, after killing the world, so that the harness records the
    case as a crash with the rank's signal; stderr (the crash's evidence) says which rank it was."""
    _end_world()
    print(f"distributed: {died}; the world was killed", file=sys.stderr, flush=True)
    if died.returncode < 0:
        signal.signal(-died.returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -died.returncode)
    os._exit(died.returncode or 1)


def _summed_collectives(replies: list[dict[str, Any]]) -> dict[str, Any] | str:
    if any(r.get("collectives") is None for r in replies):
        return "unavailable"
    total: dict[str, dict[str, int]] = {}
    for reply in replies:
        for name, count in reply["collectives"].items():
            entry = total.setdefault(name, {"calls": 0, "bytes": 0})
            entry["calls"] += count["calls"]
            entry["bytes"] += count["bytes"]
    return total


@SUITE.makes_cases
class WorldCase(suite_api.Case):
    """One case: the computation its subject names (cases.CASES), run by every rank of the world;
    the KeyError of suite_api.unknown() for a subject or dtype the suite does not have. A case that
    does not pass kills the world (a failed collective can leave the process group unusable)."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        if case_id.subject not in cases.CASES or case_id.dtype not in cases.CASES[case_id.subject].dtypes:
            raise suite_api.unknown(case_id, "such subject or dtype")
        super().__init__(case_id, ctx)
        self.computation = cases.CASES[case_id.subject]
        self.evidence["world_size"] = Settings.world_size

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        _end_world()
        return super().failed(verdict)


@SUITE.runs_found
def run_world(case: WorldCase) -> None:
    """The check world<N>: the case's computation on every rank of the live world (started when
    there is none), each rank's result against the CPU's (_judge)."""
    if case.id.check != check():
        raise KeyError(f"unknown case {case.id}: the distributed suite runs worlds of {Settings.world_size} ranks "
                       f"(check {check()}; --suite-option world_size=N)")
    try:
        world, start_seconds = _world(case.ctx)
        if start_seconds is not None:
            case.evidence["world_start_seconds"] = start_seconds
        replies = world.run(case.id.subject, case.id.dtype, case.ctx.seed)
    except RankDied as died:
        _die_like(died)
        raise  # not reached
    except WorldFailed as exc:
        raise Verdict(Outcome.ERROR, {"exception_type": "WorldFailed", "message": str(exc), "stage": "world"}) from exc
    case.evidence["collectives"] = _summed_collectives([r for r in replies if not r.get("stuck")])
    case.evidence["rank_seconds"] = [r.get("seconds") for r in replies]
    for reply in replies:
        case.ctx.add_tracked_ops(reply)
    _judge(case, replies)


def _judge(case: WorldCase, replies: list[dict[str, Any]]) -> None:
    """Every rank's reply against the CPU's result for it (and against rank 0's where every rank
    must agree): an `error` Verdict when a rank raised, a `fail` one when a result differs."""
    computation, dtype, evidence = case.computation, case.id.dtype, case.evidence
    failed = [k for k, r in enumerate(replies) if "raised" in r]
    if failed:
        first = replies[failed[0]]
        raised = {**first["raised"], "rank": failed[0], "traceback": first["traceback"]}
        stuck = [k for k, r in enumerate(replies) if r.get("stuck")]
        if stuck:
            raised["stuck_ranks"] = stuck
            raised["message"] += f" (then rank(s) {', '.join(map(str, stuck))} waited in a collective)"
        raise Verdict(Outcome.ERROR, raised)
    rtol, atol = TRAINING_TOLERANCE if computation.training else TOLERANCES[dtype]
    evidence.update(rtol=rtol, atol=atol)
    try:
        expected = computation.reference(Settings.world_size, cases.DTYPES.get(dtype, torch.float32), case.ctx.seed)
    except Exception as exc:
        raise RuntimeError(f"the CPU reference of {computation.subject} failed: {type(exc).__name__}: {exc}") from exc
    worst = [0.0, 0.0]
    for k, reply in enumerate(replies):
        checks = [(f"rank {k} against the CPU", expected[k], rtol, atol)]
        if computation.same_on_every_rank and k > 0:
            checks.insert(0, (f"rank {k} against rank 0", replies[0]["result"], 0.0, 0.0))
        for what, reference, r, a in checks:
            try:
                errors = compare(reply["result"], reference, r, a)
            except Mismatch as mismatch:
                raise Verdict(Outcome.FAIL, {"rank": k, "max_abs_error": mismatch.max_abs,
                                             "max_rel_error": mismatch.max_rel,
                                             "message": f"{what}: {str(mismatch)[:2000]}"}) from None
            worst = [max(worst[0], errors[0]), max(worst[1], errors[1])]
    evidence.update(max_abs_error=worst[0], max_rel_error=worst[1])
