"""A test-only backend for the distributed suite: torch_neuronsim with five planted faults, each
on its own collective and dtype so that the rest of the suite still runs right. Imported by the
suite's worker and by every rank process (ranks import the backend module by name).

  all_reduce, float32 SUM   rank 1's result is off by one: the ranks disagree (a wrong reduction)
  broadcast, bfloat16       rank 1 never joins: rank 0 waits forever (a hung collective)
  all_gather_into_tensor,   rank 1 dies of SIGSEGV (a crashing rank)
  float16
  DDP                       gradients summed over the ranks, never averaged (a comm hook that
                            forgets to divide)
  reduce_scatter (FSDP2)    reduce_scatter_single's output doubled: sharded gradients are wrong
Everything else is torch_neuronsim, including its op tracking and collective counters.
"""

import os
import signal
import time

import torch
import torch.distributed as dist
import torch_neuronsim
# The worker and the ranks read op tracking and collective counters from the backend module.
from torch_neuronsim import (  # noqa: F401
    clear_collective_stats,
    clear_op_tracking,
    get_collective_stats,
    get_executed_ops,
    get_fallback_ops,
)

__version__ = torch_neuronsim.__version__ + "+planted-distributed"

_all_reduce, _broadcast, _all_gather_into_tensor = dist.all_reduce, dist.broadcast, dist.all_gather_into_tensor
_reduce_scatter_single = dist.reduce_scatter_single
_DDP_init = torch.nn.parallel.DistributedDataParallel.__init__


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


dist.all_reduce = _off_by_one_all_reduce
dist.broadcast = _hanging_broadcast
dist.all_gather_into_tensor = _crashing_all_gather_into_tensor
dist.reduce_scatter_single = _doubled_reduce_scatter_single
torch.nn.parallel.DistributedDataParallel.__init__ = _unaveraged_DDP_init
