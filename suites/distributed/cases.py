"""The distributed suite's cases: what every rank runs on its device, and what it must return.

A case is a subject (a collective or a parallel API) run by every rank of a world at one dtype.
`run(rank)` runs on each rank's process against the backend under test and returns what is
compared (tensors come back to the host); `reference(world_size, dtype, seed)` computes, on the
CPU in one process with the same inputs, what each rank must return. Inputs are derived from
(seed, rank), so a rank and the reference build the same ones without talking to each other.
This module is imported by rank processes (rank.py) and by the suite (suite.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from dispatch_capture import uncounted

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "int32": torch.int32}
COLLECTIVE_DTYPES = ("float32", "bfloat16", "float16", "int32")
FLOAT_DTYPES = ("float32", "bfloat16")


def data(seed: int, rank: int, shape: tuple[int, ...], dtype: torch.dtype, which: int = 0) -> torch.Tensor:
    """A rank's input on the host: the same for (seed, rank, which) in every process. Integers are
    small so that products and sums stay exact."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + rank * 1_009 + which)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(-4, 5, shape, generator=g).to(dtype)


@dataclass
class Rank:
    """One rank's view of a case: who it is, where its device is, and its inputs."""

    rank: int
    world_size: int
    dtype: torch.dtype
    device: torch.device
    seed: int
    mesh: Callable[[], Any] = field(repr=False, default=lambda: None)  # the world's 1-D DeviceMesh

    @uncounted()  # the harness's copy to the device: no op of the case's
    def input(self, shape: tuple[int, ...], which: int = 0, rank: int | None = None) -> torch.Tensor:
        return data(self.seed, self.rank if rank is None else rank, shape, self.dtype, which).to(self.device)

    @uncounted()  # the harness's: where a collective writes its result
    def empty(self, shape: tuple[int, ...]) -> torch.Tensor:
        return torch.empty(shape, dtype=self.dtype, device=self.device)


@uncounted()  # the harness's copies back to the host: no op of the case's
def host(value: Any) -> Any:
    """What a rank returns (tensors, in lists and dicts), copied to the host."""
    return pytree.tree_map_only(torch.Tensor, lambda t: t.detach().cpu(), value)


@dataclass(frozen=True)
class Case:
    subject: str
    dtypes: tuple[str, ...]
    run: Callable[[Rank], Any]
    reference: Callable[[int, torch.dtype, int], list[Any]]
    # Training cases sum gradients in another order than one process does.
    training: bool = False
    # Every rank must return the same thing, bit for bit (DDP's gradients, a broadcast, ...).
    same_on_every_rank: bool = False


CASES: dict[str, Case] = {}


def case(subject: str, dtypes: tuple[str, ...], **options: Any):
    def register(pair: tuple[Callable, Callable]) -> tuple[Callable, Callable]:
        if subject in CASES:
            raise ValueError(f"distributed case '{subject}' is defined twice")
        CASES[subject] = Case(subject, dtypes, pair[0], pair[1], **options)
        return pair
    return register


def _dist():
    import torch.distributed as dist
    return dist


# ---- collectives ---------------------------------------------------------------------------------

SHAPE = (4, 6)
REDUCTIONS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "sum": torch.add, "avg": torch.add, "max": torch.maximum, "min": torch.minimum, "product": torch.mul,
}


def _reduced(op: str, tensors: list[torch.Tensor]) -> torch.Tensor:
    out = functools.reduce(REDUCTIONS[op], tensors)
    return out / len(tensors) if op == "avg" else out


def _all_reduce(op: str, noncontiguous: bool) -> tuple[Callable, Callable]:
    def shaped(t: torch.Tensor) -> torch.Tensor:
        return t.t() if noncontiguous else t  # a transposed view: strides (1, 4)

    def run(r: Rank) -> torch.Tensor:
        dist = _dist()
        with uncounted():  # the harness's input
            x = shaped(r.input(SHAPE))
        dist.all_reduce(x, getattr(dist.ReduceOp, op.upper()), async_op=True).wait()
        return host(x)

    def reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
        out = _reduced(op, [shaped(data(seed, k, SHAPE, dtype)) for k in range(world)])
        return [out] * world

    return run, reference


for _op in REDUCTIONS:
    case(f"all_reduce.{_op}", COLLECTIVE_DTYPES, same_on_every_rank=True)(_all_reduce(_op, False))
case("all_reduce.sum.noncontiguous", COLLECTIVE_DTYPES, same_on_every_rank=True)(_all_reduce("sum", True))


def _broadcast_run(r: Rank) -> torch.Tensor:
    with uncounted():  # the harness's input
        x = r.input(SHAPE).t()  # non-contiguous: the backend must write through the view's strides
    _dist().broadcast(x, src=0, async_op=True).wait()
    return host(x)


case("broadcast", COLLECTIVE_DTYPES, same_on_every_rank=True)(
    (_broadcast_run, lambda world, dtype, seed: [data(seed, 0, SHAPE, dtype).t()] * world))


def _all_gather_into_tensor_run(r: Rank) -> torch.Tensor:
    out = r.empty((r.world_size * SHAPE[0], SHAPE[1]))
    _dist().all_gather_into_tensor(out, r.input(SHAPE), async_op=True).wait()
    return host(out)


case("all_gather_into_tensor", COLLECTIVE_DTYPES, same_on_every_rank=True)(
    (_all_gather_into_tensor_run,
     lambda world, dtype, seed: [torch.cat([data(seed, k, SHAPE, dtype) for k in range(world)])] * world))


def _all_gather_run(r: Rank) -> list[torch.Tensor]:
    out = [r.empty(SHAPE) for _ in range(r.world_size)]
    _dist().all_gather(out, r.input(SHAPE), async_op=True).wait()
    return host(out)


case("all_gather", COLLECTIVE_DTYPES, same_on_every_rank=True)(
    (_all_gather_run, lambda world, dtype, seed: [[data(seed, k, SHAPE, dtype) for k in range(world)]] * world))


def _reduce_scatter_run(r: Rank) -> torch.Tensor:
    out = r.empty(SHAPE)
    _dist().reduce_scatter_tensor(out, r.input((r.world_size * SHAPE[0], SHAPE[1])), async_op=True).wait()
    return host(out)


def _reduce_scatter_reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
    total = _reduced("sum", [data(seed, k, (world * SHAPE[0], SHAPE[1]), dtype) for k in range(world)])
    return list(total.chunk(world))


case("reduce_scatter_tensor", COLLECTIVE_DTYPES)((_reduce_scatter_run, _reduce_scatter_reference))


def _splits(sender: int, world: int, uneven: bool) -> list[int]:
    """Rows `sender` sends to each rank: 2 each, or sender + receiver + 1 when uneven."""
    return [sender + receiver + 1 if uneven else 2 for receiver in range(world)]


def _all_to_all(uneven: bool) -> tuple[Callable, Callable]:
    def run(r: Rank) -> torch.Tensor:
        send = _splits(r.rank, r.world_size, uneven)
        receive = [_splits(k, r.world_size, uneven)[r.rank] for k in range(r.world_size)]
        out = r.empty((sum(receive), 3))
        _dist().all_to_all_single(out, r.input((sum(send), 3)), receive if uneven else None,
                                  send if uneven else None, async_op=True).wait()
        return host(out)

    def reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
        inputs = [data(seed, k, (sum(_splits(k, world, uneven)), 3), dtype).split(_splits(k, world, uneven))
                  for k in range(world)]
        return [torch.cat([inputs[k][receiver] for k in range(world)]) for receiver in range(world)]

    return run, reference


case("all_to_all_single", COLLECTIVE_DTYPES)(_all_to_all(False))
case("all_to_all_single.uneven", COLLECTIVE_DTYPES)(_all_to_all(True))


def _send_recv_run(r: Rank) -> torch.Tensor:
    """A ring: every rank sends its input to the next and receives the previous one's."""
    dist = _dist()
    received = r.empty(SHAPE)
    works = [dist.isend(r.input(SHAPE), (r.rank + 1) % r.world_size),
             dist.irecv(received, (r.rank - 1) % r.world_size)]
    for work in works:
        work.wait()
    return host(received)


case("send_recv", COLLECTIVE_DTYPES)(
    (_send_recv_run, lambda world, dtype, seed: [data(seed, (k - 1) % world, SHAPE, dtype) for k in range(world)]))


def _barrier_run(r: Rank) -> torch.Tensor:
    """After the barrier every rank must see what every other rank wrote to the store before it."""
    dist = _dist()
    store = dist.distributed_c10d._get_default_store()
    store.set(f"barrier/{r.seed}/{r.rank}", str(r.rank))
    dist.barrier()
    return torch.tensor([int(store.get(f"barrier/{r.seed}/{k}")) for k in range(r.world_size)])


case("barrier", ("-",), same_on_every_rank=True)(
    (_barrier_run, lambda world, dtype, seed: [torch.arange(world)] * world))


# ---- DDP, FSDP2 ---------------------------------------------------------------------------------

BATCH = 4  # rows per rank


def _mlp(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def _mlp_batch(seed: int, rank: int, step: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    return (data(seed, rank, (BATCH, 8), torch.float32, which=2 * step),
            data(seed, rank, (BATCH, 4), torch.float32, which=2 * step + 1))


def _mlp_loss(model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return torch.nn.functional.mse_loss(model(batch[0]), batch[1])


def _ddp_run(r: Rank) -> dict[str, Any]:
    model = _to(_mlp(r.seed), r.device)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    x, y = _to(_mlp_batch(r.seed, r.rank), r.device)
    torch.nn.functional.mse_loss(ddp(x), y).backward()
    grads = host([p.grad for p in model.parameters()])
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    return {"grads": grads, "params": host(list(model.parameters()))}


def _ddp_reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
    """One process, the ranks' batches concatenated: DDP averages equal-sized ranks' gradients."""
    model = _mlp(seed)
    batches = [_mlp_batch(seed, k) for k in range(world)]
    _mlp_loss(model, (torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches]))).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    return [{"grads": grads, "params": [p.detach().clone() for p in model.parameters()]}] * world


case("ddp.mlp", ("float32",), training=True, same_on_every_rank=True)((_ddp_run, _ddp_reference))

STEPS = 3


def _tiny_llama(seed: int) -> torch.nn.Module:
    """The tiny LlamaForCausalLM the hf suite builds too (harness/worker/suitelib/tiny_models.py)."""
    import transformers
    from suitelib.tiny_models import tiny_config

    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(tiny_config("LlamaForCausalLM"))


def _llama_batch(seed: int, rank: int, step: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed * 1_000_003 + rank * 1_009 + step)
    return torch.randint(3, 99, (2, 8), generator=g)


def _llama_loss(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return model(input_ids=ids, labels=ids).loss


@dataclass(frozen=True)
class Trained:
    build: Callable[[int], torch.nn.Module]
    batch: Callable[[int, int, int], Any]
    loss: Callable[[torch.nn.Module, Any], torch.Tensor]
    concat: Callable[[list[Any]], Any]
    shard: Callable[[torch.nn.Module], list[torch.nn.Module]]  # the submodules sharded on their own


MLP = Trained(_mlp, _mlp_batch, _mlp_loss, lambda bs: (torch.cat([b[0] for b in bs]), torch.cat([b[1] for b in bs])),
              lambda m: [layer for layer in m if isinstance(layer, torch.nn.Linear)])
LLAMA = Trained(_tiny_llama, _llama_batch, _llama_loss, torch.cat, lambda m: list(m.model.layers))


@uncounted()  # the harness's copies to the device (a model, a batch): no op of the case's
def _to(batch: Any, device: torch.device) -> Any:
    return tuple(t.to(device) for t in batch) if isinstance(batch, tuple) else batch.to(device)


def _fsdp2(trained: Trained) -> tuple[Callable, Callable]:
    def run(r: Rank) -> dict[str, Any]:
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.tensor import DTensor, Shard

        model = _to(trained.build(r.seed), r.device)
        for sub in trained.shard(model):
            fully_shard(sub, mesh=r.mesh())
        fully_shard(model, mesh=r.mesh())
        for name, p in model.named_parameters():
            with uncounted():  # the harness looks at where the shard is
                local = p.to_local() if isinstance(p, DTensor) else p
            if not isinstance(p, DTensor) or p.placements != (Shard(0),) or local.device != r.device:
                raise AssertionError(f"parameter {name} is not a Shard(0) DTensor on {r.device} after fully_shard "
                                     f"({type(p).__name__}, {getattr(p, 'placements', None)}, {local.device})")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(STEPS):
            loss = trained.loss(model, _to(trained.batch(r.seed, r.rank, step), r.device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(host(loss))
        return {"losses": torch.stack(losses), "params": host([p.full_tensor() for p in model.parameters()])}

    def reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
        """One process over the concatenated batch (FSDP2 averages the ranks' gradients); each rank's
        loss is the reference model's loss on that rank's batch at that step."""
        model = trained.build(seed)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        losses: list[list[torch.Tensor]] = [[] for _ in range(world)]
        for step in range(STEPS):
            batches = [trained.batch(seed, k, step) for k in range(world)]
            with torch.no_grad():
                for k in range(world):
                    losses[k].append(trained.loss(model, batches[k]))
            trained.loss(model, trained.concat(batches)).backward()
            optimizer.step()
            optimizer.zero_grad()
        params = [p.detach().clone() for p in model.parameters()]
        return [{"losses": torch.stack(losses[k]), "params": params} for k in range(world)]

    return run, reference


case("fsdp2.mlp", ("float32",), training=True)(_fsdp2(MLP))
case("fsdp2.llama", ("float32",), training=True)(_fsdp2(LLAMA))


# ---- DTensor --------------------------------------------------------------------------------------

def _global(seed: int, world: int, dtype: torch.dtype, which: int = 0) -> torch.Tensor:
    """A tensor every rank holds whole (rank 0's data): 2 rows and 2 columns per rank."""
    return data(seed, 0, (2 * world, 2 * world), dtype, which)


def _sharded(r: Rank, api: Any, placement: Any, which: int = 0) -> Any:
    whole = _to(_global(r.seed, r.world_size, r.dtype, which), r.device)
    return api.distribute_tensor(whole, r.mesh(), [placement])


def _dtensor(run: Callable[[Rank, Any], Any], whole: Callable[[int, int, torch.dtype], torch.Tensor],
             local: Callable[[torch.Tensor, int, int], torch.Tensor]) -> tuple[Callable, Callable]:
    """A DTensor case: `run(rank, torch.distributed.tensor)` returns a DTensor; each rank returns its
    local shard (which must be on its device) and the full tensor. The reference is `whole(seed,
    world, dtype)` on the CPU, and rank k's shard of it `local(whole, k, world)`."""
    def on_rank(r: Rank) -> dict[str, Any]:
        from torch.distributed import tensor as api

        result = run(r, api)
        shard = result.to_local()
        if shard.device != r.device:
            raise AssertionError(f"the local shard is on {shard.device}, not on {r.device}")
        return {"local": host(shard), "full": host(result.full_tensor())}

    def reference(world: int, dtype: torch.dtype, seed: int) -> list[Any]:
        expected = whole(seed, world, dtype)
        return [{"local": local(expected, k, world), "full": expected} for k in range(world)]

    return on_rank, reference


def _rows(t: torch.Tensor, k: int, world: int) -> torch.Tensor:
    return t.chunk(world)[k]


def _columns(t: torch.Tensor, k: int, world: int) -> torch.Tensor:
    return t.chunk(world, dim=1)[k]


def _all(t: torch.Tensor, k: int, world: int) -> torch.Tensor:
    return t


case("dtensor.distribute", FLOAT_DTYPES)(_dtensor(
    lambda r, api: _sharded(r, api, api.Shard(0)), _global, _rows))
case("dtensor.redistribute.shard0_replicate", FLOAT_DTYPES)(_dtensor(
    lambda r, api: _sharded(r, api, api.Shard(0)).redistribute(r.mesh(), [api.Replicate()]), _global, _all))
case("dtensor.redistribute.shard0_shard1", FLOAT_DTYPES)(_dtensor(
    lambda r, api: _sharded(r, api, api.Shard(0)).redistribute(r.mesh(), [api.Shard(1)]), _global, _columns))
# Each rank's own tensor taken as the partial sums of one DTensor, made whole.
case("dtensor.redistribute.partial_replicate", FLOAT_DTYPES)(_dtensor(
    lambda r, api: api.DTensor.from_local(r.input(SHAPE), r.mesh(), [api.Partial()]).redistribute(
        r.mesh(), [api.Replicate()]),
    lambda seed, world, dtype: _reduced("sum", [data(seed, k, SHAPE, dtype) for k in range(world)]), _all))
case("dtensor.add", FLOAT_DTYPES)(_dtensor(
    lambda r, api: _sharded(r, api, api.Shard(0)) + _sharded(r, api, api.Shard(0), which=1),
    lambda seed, world, dtype: _global(seed, world, dtype) + _global(seed, world, dtype, which=1), _rows))
case("dtensor.matmul", FLOAT_DTYPES)(_dtensor(
    lambda r, api: _sharded(r, api, api.Shard(0)) @ _sharded(r, api, api.Replicate(), which=1),
    lambda seed, world, dtype: _global(seed, world, dtype) @ _global(seed, world, dtype, which=1), _rows))
