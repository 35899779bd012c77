"""The `devices` check: where an op's tensors live, the axis PyTorch's CUDA tests cover with
@deviceCountAtLeast(2) and `torch.cuda.device(...)`. At one dtype per OpInfo
(sample_variants.representative_dtype), for the first samples the CPU runs:

- `other_device` (the backend has a second device): the whole sample on device 1 while device 0
  is current. Every tensor output must be on device 1 (a kernel without a device guard allocates
  on the current device) and hold the CPU's values.
- `cpu_operand`: each tensor argument of one or more dimensions left on the CPU, the others on
  the device. The device must refuse it with a RuntimeError, as CUDA refuses it ("Expected all
  tensors to be on the same device"): a backend that computes anyway hands back a device result
  PyTorch never gives. A 0-dim operand (`cpu_scalar`: a scalar, which PyTorch reads as a number)
  may be taken, so may any operand of a sample holding an empty tensor (a composite such as
  bilinear returns before any kernel that checks devices, on CUDA too), and so may any operand of the OpInfos MAY_TAKE_ANOTHER_DEVICE
  names: taken, the result must be the CPU's; refused, the evidence counts it.
- `other_device_operand` (a second device): each tensor argument on device 1, the others on
  device 0: refused alike.
A variant that leaves no tensor on the device (the op's only device tensor moved) is not made.

Evidence: `device_variants` (each kind, how often it ran), `devices` (how many the backend has).
"""

from __future__ import annotations

from typing import Any, Iterator

import torch
import torch.utils._pytree as pytree

import suite_api
from comparison import own_copy, to_device
from sides import NoReference, seed

from suitelib.opinfo import runs, sample_variants

DESCRIPTION = ("where tensors live: a sample on the second device while the first is current (outputs there), and "
               "operands on the CPU or on another device, which the device must refuse as CUDA does")

SAMPLES_PER_CASE = 3

# OpInfos that PyTorch defines for operands on two devices (reviewed, with why): the device may
# take such a variant (and must then give the CPU's values) or refuse it.
MAY_TAKE_ANOTHER_DEVICE = {
    "__getitem__": "CPU index tensors are moved to the device (advanced indexing)",
    "index_put": "CPU index tensors are moved to the device",
    "_unsafe_masked_index": "its indices are index's (Tensor?[]), which CUDA moves",
    "_unsafe_masked_index_put_accumulate": "its indices are index_put's (Tensor?[]), which CUDA moves",
    "tensor_split": "tensor_indices_or_sections must be on the CPU",
    "expand_as": "reads only the other tensor's sizes",
    "view_as": "reads only the other tensor's sizes",
    "reshape_as": "reads only the other tensor's sizes",
    "resize_as_": "reads only the other tensor's sizes",
    "broadcast_tensors": "views each tensor where it is; reads only sizes across them",
    "narrow": "a start given as a tensor is read as a number",
    "as_strided_scatter": "a clone of the input with the source copied in (copy_ crosses devices)",
    "diagonal_scatter": "a clone of the input with the source copied in (copy_ crosses devices)",
    "select_scatter": "a clone of the input with the source copied in (copy_ crosses devices)",
    "slice_scatter": "a clone of the input with the source copied in (copy_ crosses devices)",
    "nn.functional.ctc_loss": "targets and lengths may be CPU tensors (cuDNN's CTC requires them there)",
}


def applies(op, dtype: torch.dtype) -> bool:
    return dtype == sample_variants.representative_dtype(op)


def _device_count(device: str) -> int:
    module = getattr(torch, torch.device(device).type, None)
    count = getattr(module, "device_count", None)
    return int(count()) if callable(count) else 1


def _indexed(device: str, index: int) -> str:
    return f"{torch.device(device).type}:{index}"


def _leaves(sample) -> tuple[list[Any], Any]:
    return pytree.tree_flatten([sample.input, sample.args, sample.kwargs])


def _with_leaves(sample, leaves: list[Any], spec) -> Any:
    input, args, kwargs = pytree.tree_unflatten(leaves, spec)
    return sample_variants.rebuilt(sample, input=input, args=tuple(args), kwargs=kwargs)


def _names_cpu(sample) -> bool:
    """Whether an argument asks for a CPU result (a `device="cpu"`, `to("cpu")`)."""
    return any((isinstance(v, str) and v.split(":")[0] == "cpu") or (isinstance(v, torch.device) and v.type == "cpu")
               for v in pytree.tree_leaves([sample.args, sample.kwargs]))


def _mixed(sample, on_main, elsewhere: str | None) -> Iterator[tuple[int, Any, torch.Tensor]]:
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
        yield position, _with_leaves(on_main, leaves, spec), operand


def _outputs(value: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


@suite_api.check("devices", DESCRIPTION, applies=applies)
def run(case: runs.Case) -> None:
    op, device = case.op, case.ctx.device
    raw = lambda s: op(s.input, *s.args, **s.kwargs)  # noqa: E731
    devices = _device_count(device)
    main, other = _indexed(device, 0), _indexed(device, 1)
    ran: dict[str, int] = {}
    case.evidence["devices"] = devices
    for index, sample in enumerate(runs.samples(op, case.dtype, reference=False)):
        if case.compared >= SAMPLES_PER_CASE:
            break
        try:
            expected = case.cpu(raw, sample)
        except NoReference:
            case.without_reference += 1
            continue
        where = lambda name, prop, **more: {"variant": name, "property": prop, "sample_index": index,  # noqa: E731
                                            "sample": sample, **more}
        wants_cpu = _names_cpu(sample)
        if devices >= 2:
            with torch.accelerator.device_index(0):  # device 0 current, the inputs on device 1
                _on_other_device(case, raw, sample, expected, other, wants_cpu, where)
            ran["other_device"] = ran.get("other_device", 0) + 1
        on_main = runs.on_device(sample, main, op)
        takes_any = op.name in MAY_TAKE_ANOTHER_DEVICE or any(not t.numel() for t in runs.tensors(sample))
        for elsewhere, kind in ((None, "cpu_operand"), (other, "other_device_operand")):
            if elsewhere is not None and devices < 2:
                continue
            for position, variant, operand in _mixed(sample, on_main, elsewhere):
                name = "cpu_scalar" if elsewhere is None and operand.dim() == 0 else kind
                taken = _mixed_call(case, raw, variant, expected, takes_any or operand.dim() == 0,
                                    where(name, "refused", operand=position, operand_device=elsewhere or "cpu"))
                key = f"{name}_{'taken' if taken else 'refused'}"
                ran[key] = ran.get(key, 0) + 1
        case.compared += 1
    case.evidence["device_variants"] = ran
    if not case.compared:
        case.vacuous = "no sample the CPU runs"


def _on_other_device(case, raw, sample, expected, other: str, wants_cpu: bool, where) -> None:
    current = torch.accelerator.current_device_index()
    w = where("other_device", "outputs on the inputs' device", device=other, current_device=current)
    actual = case.device(lambda s: raw(runs.on_device(s, other, case.op)), sample, where=w)
    if not wants_cpu:
        for position, t in enumerate(_outputs(actual)):
            if t.device != torch.device(other):
                raise case.fail(f"output {position} is on {t.device}, not on {other} where the inputs are "
                                f"(the current device is {current})", w)
    case.compare(actual, expected, {**w, "property": "values"})
    case.variants_compared += 1


def _mixed_call(case, raw, variant, expected, may_take: bool, where: dict[str, Any]) -> bool:
    """Runs a sample whose operands live on two devices. Returns whether the device took it (it
    may only where `may_take`; taken, its result must be the CPU's and on the device)."""
    try:
        seed(case.ctx.seed)
        actual = raw(variant)
    except RuntimeError:
        case.variants_compared += 1
        return False
    except Exception as exc:
        raise case.fail(f"the device raised {type(exc).__name__} ({str(exc)[:300]}) for operands on two devices, "
                        f"where CUDA raises a RuntimeError", {**where, "property": "error type"}) from None
    if not may_take:
        placed = sorted({str(t.device) for t in _outputs(actual)})
        raise case.fail(f"the device computed a result (on {', '.join(placed) or 'no tensor'}) from operands on two "
                        f"devices ({where['operand_device']} for operand {where['operand']}), where CUDA refuses them: "
                        f"Expected all tensors to be on the same device", where)
    case.compare(actual, expected, {**where, "property": "taken operand"})
    case.variants_compared += 1
    return True
