"""The defects the distributed suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): faults of torch.distributed's collectives and of DDP, each on its
own collective and dtype so that the rest of the suite still runs right. No kernel carries them:
each class is a patch of a torch.distributed function (or of DDP's constructor). defects_backend is
imported by the suite's worker and by every rank process (a rank imports the backend module by
name, and inherits DEFECTS_CLASSES), so the ranks run the planted collectives. Opt-in;
harness/tests/test_distributed_suite.py plants them. Never imported by a real run."""

from __future__ import annotations

import os
import signal
import time

import torch
import torch.distributed as dist

from suitelib.planting import Defect

_all_reduce, _broadcast, _all_gather_into_tensor = dist.all_reduce, dist.broadcast, dist.all_gather_into_tensor
_reduce_scatter_single = dist.reduce_scatter_single
_DDP = torch.nn.parallel.DistributedDataParallel
_DDP_init = _DDP.__init__


def _off_by_one_all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
    work = _all_reduce(tensor, op, group, async_op)
    if tensor.dtype == torch.float32 and op == dist.ReduceOp.SUM and dist.get_rank() == 1:
        if work is not None:
            work.wait()
        tensor.add_(1)
    return work


def _hanging_broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    if tensor.dtype == torch.bfloat16 and dist.get_rank() == 1:
        time.sleep(3600)
    return _broadcast(tensor, src, group, async_op, group_src)


def _crashing_all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    if input_tensor.dtype == torch.float16 and dist.get_rank() == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    return _all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def _doubled_reduce_scatter_single(output, input, *args, **kwargs):
    work = _reduce_scatter_single(output, input, *args, **kwargs)
    if work is not None:
        work.wait()
    output.mul_(2)
    return None if work is None else _Done()


class _Done:
    def wait(self, timeout=None):
        return True


def _summing_hook(state, bucket):
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda f: f.value()[0])


def _unaveraged_DDP_init(self, *args, **kwargs):
    _DDP_init(self, *args, **kwargs)
    self.register_comm_hook(None, _summing_hook)


DEFECTS = {
    "wrong_reduction": Defect({}, "all_reduce, float32 SUM: rank 1's result is off by one", "the ranks disagree "
                              "(all_reduce.sum at float32: rank 1 against rank 0)", opt_in=True,
                              patches={(dist, "all_reduce"): _off_by_one_all_reduce}),
    "hung_collective": Defect({}, "broadcast, bfloat16: rank 1 never joins, rank 0 waits forever",
                              "timeout (broadcast at bfloat16; the world dies with the worker)", opt_in=True,
                              patches={(dist, "broadcast"): _hanging_broadcast}),
    "crashing_rank": Defect({}, "all_gather_into_tensor, float16: rank 1 dies of SIGSEGV",
                            "crash (all_gather_into_tensor at float16: the rank's signal, the world killed)",
                            opt_in=True, patches={(dist, "all_gather_into_tensor"): _crashing_all_gather_into_tensor}),
    "unaveraged_ddp": Defect({}, "DDP: gradients summed over the ranks, never averaged (a comm hook that forgets "
                             "to divide)", "ddp.* (against the CPU)", opt_in=True,
                             patches={(_DDP, "__init__"): _unaveraged_DDP_init}),
    "doubled_shards": Defect({}, "reduce_scatter (FSDP2): reduce_scatter_single's output doubled, so sharded "
                             "gradients are wrong", "fsdp2.* (against the CPU)", opt_in=True,
                             patches={(dist, "reduce_scatter_single"): _doubled_reduce_scatter_single}),
}
