"""One rank of a distributed world: a process of its own, started by world.py.

It imports the backend, joins the world's process group (the store is the leader's TCPStore on
127.0.0.1:<port>; the group is "cpu:gloo,<device>:<the device's c10d backend>"), says it is
ready, then runs the cases the leader sends until told to stop. Messages are pickled (plainly: tensors
by value) over two pipes (multiprocessing.connection): requests {"subject", "dtype", "seed"} or None to stop;
replies {"result", "collectives", "native_ops", "fallback_ops", "seconds"} or {"raised", "traceback"} (the exception).
The leader set PR_SET_PDEATHSIG before exec: this process dies with it.
"""

from __future__ import annotations

import argparse
import importlib
import pickle
import time
import traceback
from datetime import timedelta
from multiprocessing.connection import Connection
from typing import Any


def _send(conn: Connection, message: dict[str, Any]) -> None:
    """Plain pickle: Connection.send's pickler would pass tensors as shared-memory handles."""
    conn.send_bytes(pickle.dumps(message))


def _call(backend: Any, name: str, default: Any) -> Any:
    """An optional introspection function of the backend (a real torch_neuronx may lack it)."""
    function = getattr(backend, name, None)
    return function() if callable(function) else default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend-module", required=True)
    parser.add_argument("--device-type", required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--store-port", type=int, required=True)
    parser.add_argument("--requests-fd", type=int, required=True)
    parser.add_argument("--replies-fd", type=int, required=True)
    args = parser.parse_args()
    requests, replies = Connection(args.requests_fd, writable=False), Connection(args.replies_fd, readable=False)

    started = time.perf_counter()
    try:
        import torch
        import torch.distributed as dist

        backend = importlib.import_module(args.backend_module)
        device = torch.device(args.device_type, args.rank)
        torch.get_device_module(args.device_type).set_device(args.rank)
        store = dist.TCPStore("127.0.0.1", args.store_port, args.world_size, is_master=False,
                              timeout=timedelta(seconds=60))
        c10d_backend = dist.Backend.default_device_backend_map[args.device_type]
        dist.init_process_group(f"cpu:gloo,{args.device_type}:{c10d_backend}", store=store, rank=args.rank,
                                world_size=args.world_size)
        import suite_api  # the worker's modules are on PYTHONPATH (world.py)

        suite_api.package()
        # after the backend: the cases' imports may touch torch.testing
        from neuron_conform_suites.distributed import cases
        from evidence import exception_evidence
        from case_context import Context

        ctx = Context(backend, args.device_type, 0)  # the ops each case runs, as a worker sees them
    except Exception as exc:
        _send(replies, {"fatal": f"rank {args.rank} could not join its world: {type(exc).__name__}: {exc}"})
        raise
    _send(replies, {"ready": True, "seconds": time.perf_counter() - started})

    mesh: list[Any] = []

    def world_mesh() -> Any:
        if not mesh:
            from torch.distributed.device_mesh import init_device_mesh
            mesh.append(init_device_mesh(args.device_type, (args.world_size,)))
        return mesh[0]

    while (request := pickle.loads(requests.recv_bytes())) is not None:
        began = time.perf_counter()
        ctx.clear_tracking()
        _call(backend, "clear_collective_stats", None)
        try:
            case = cases.CASES[request["subject"]]
            rank = cases.Rank(args.rank, args.world_size, cases.DTYPES.get(request["dtype"], torch.float32), device,
                              request["seed"], world_mesh)
            with ctx.capture:
                reply: dict[str, Any] = {"result": case.run(rank)}
        except Exception as exc:
            reply = {"raised": exception_evidence(exc), "traceback": traceback.format_exc()[-3000:]}
        reply.update(seconds=time.perf_counter() - began,
                     collectives=_call(backend, "get_collective_stats", None), **ctx.tracked_ops())
        _send(replies, reply)
    dist.destroy_process_group()


if __name__ == "__main__":
    from quick_exit import run_main  # the worker's modules are on PYTHONPATH (world.py)

    run_main(main)
