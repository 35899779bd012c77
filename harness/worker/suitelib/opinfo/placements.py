"""Where a sample's tensors live: the device axis the ops suite's `devices` check and the fuzz suite
share. A sample placed on the second device while the first is current (its outputs must stay on
the inputs' device), and samples whose operands live on two devices (one left on the CPU, or
placed on another device index), which the device must refuse as CUDA refuses them ("Expected all
tensors to be on the same device"), except where PyTorch defines the mix (0-dim operands, which
PyTorch reads as numbers; samples holding an empty tensor; the reviewed fact may_take_another_device).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Iterator

import torch
import torch.utils._pytree as pytree

from comparison import own_copy, to_device
from sides import seed
from suitelib import reviewed

from . import calls, facts, sample_variants, samples

def device_count(device: str) -> int:
    module = getattr(torch, torch.device(device).type, None)
    count = getattr(module, "device_count", None)
    return int(count()) if callable(count) else 1


def indexed(device: str, index: int) -> str:
    return f"{torch.device(device).type}:{index}"


def may_take(op, sample, operand: torch.Tensor) -> bool:
    """Whether the device may take `operand` of the sample from another device: a 0-dim operand
    (PyTorch reads it as a number), or any operand where may_take_any."""
    return operand.dim() == 0 or may_take_any(op, sample)


def may_take_any(op, sample) -> bool:
    """Whether PyTorch defines the op on this sample with operands on two devices: the reviewed
    fact may_take_another_device (facts.json); any sample holding an empty tensor; and the _foreach_* ops, whose lists may span devices
    (CUDA's slow path computes each tensor where it lives, refusing only a pair split across two)."""
    return (facts.about(op, "may_take_another_device") is not None or op.name.startswith("_foreach_")
            or any(not t.numel() for t in samples.tensors(sample)))


def _split(op) -> bool:
    """Whether, without the fact may_take_another_device, the device would have to refuse a sample
    of the OpInfo split across devices: one of two or more non-empty operands (out= counting as one
    where the OpInfo has it), not 0-dim."""
    if op.name.startswith("_foreach_"):
        return False
    for sample in samples.at_one_dtype(op):
        operands = samples.tensors(sample)
        if all(t.numel() for t in operands) and any(t.dim() for t in operands) and \
                sum(t.layout == torch.strided for t in operands) + bool(op.supports_out) >= 2:
            return True
    return False


@reviewed.document
@cache
def may_take_another_device_facts() -> dict[str, dict[str, Any]]:
    """facts.json's may_take_another_device facts, each about an OpInfo whose samples the device
    would otherwise have to refuse on two devices."""
    return facts.applying("may_take_another_device", lambda op, _: _split(op),
                          "it is a _foreach_ op, or no sample of it has two non-empty operands (out= counting), one not 0-dim")


def _leaves(sample) -> tuple[list[Any], Any]:
    return pytree.tree_flatten([sample.input, sample.args, sample.kwargs])


def mixed(sample, on_main, elsewhere: str | None) -> Iterator[tuple[int, Any, torch.Tensor]]:
    """(position, variant, moved operand): `on_main` (the sample on the main device) with one
    tensor argument at a time placed `elsewhere` (a device), or left on the CPU (None); never the
    only tensor left on the main device."""
    main_leaves, spec = _leaves(on_main)
    cpu_leaves, _ = _leaves(sample)
    on_device = [isinstance(t, torch.Tensor) and t.device.type != "cpu" for t in main_leaves]
    for position, (moved, original) in enumerate(zip(main_leaves, cpu_leaves)):
        if not on_device[position] or moved.layout != torch.strided or sum(on_device) < 2:
            continue
        operand = own_copy(original) if elsewhere is None else to_device(original, elsewhere)
        leaves = list(main_leaves)
        leaves[position] = operand
        input, args, kwargs = pytree.tree_unflatten(leaves, spec)
        yield position, sample_variants.rebuilt(on_main, input=input, args=tuple(args), kwargs=kwargs), operand


def outputs(value: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


def mixed_call(case, run, variant, expected, may_take: bool, where: dict[str, Any]) -> bool:
    """Runs a sample whose operands live on two devices. Returns whether the device took it (it
    may only where `may_take`; taken, its result must be the CPU's and on the device)."""
    try:
        seed(case.ctx.seed)
        actual = run(variant)
    except RuntimeError:
        case.variants_compared += 1
        return False
    except Exception as exc:
        raise case.fail(f"the device raised {type(exc).__name__} ({str(exc)[:300]}) for operands on two devices, "
                        f"where CUDA raises a RuntimeError", {**where, "property": "error type"}) from None
    if isinstance(actual, calls.Call):  # the moved operand is a copy: what the call wrote there is no argument's
        actual, expected = actual.result, expected.result
        case.evidence["arguments_not_compared"] = "operands on two devices: the moved operand is a copy"
    if not may_take:
        placed = sorted({str(t.device) for t in outputs(actual)})
        raise case.fail(f"the device computed a result (on {', '.join(placed) or 'no tensor'}) from operands on two "
                        f"devices ({where['operand_device']} for operand {where['operand']}), where CUDA refuses them: "
                        f"Expected all tensors to be on the same device", {**where, "property": "refused"})
    case.compare(actual, expected, {**where, "property": "taken operand"})
    case.variants_compared += 1
    return True
