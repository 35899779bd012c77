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
  bilinear returns before any kernel that checks devices, on CUDA too), and so may any operand of
  the OpInfos with the reviewed fact may_take_another_device (suitelib/opinfo/facts.json): taken, the result must be the CPU's; refused, the evidence counts it.
- `other_device_operand` (a second device): each tensor argument on device 1, the others on
  device 0: refused alike.
A variant that leaves no tensor on the device (the op's only device tensor moved) is not made.

Evidence: `device_variants` (each kind, how often it ran), `devices` (how many the backend has).
"""

from __future__ import annotations

import torch

import suite_api
from sides import NoReference

from suitelib.opinfo import judge, placements, sample_variants, samples

DESCRIPTION = ("where tensors live: a sample on the second device while the first is current (outputs there), and "
               "operands on the CPU or on another device, which the device must refuse as CUDA does")

SAMPLES_PER_CASE = 3


def applies(op, dtype: torch.dtype) -> bool:
    return dtype == sample_variants.representative_dtype(op)


@suite_api.check("devices", DESCRIPTION, applies=applies)
def run(case: judge.Case) -> None:
    op, device = case.op, case.ctx.device
    raw = lambda s: op(s.input, *s.args, **s.kwargs)  # noqa: E731
    devices = placements.device_count(device)
    main, other = placements.indexed(device, 0), placements.indexed(device, 1)
    ran: dict[str, int] = {}
    case.evidence["devices"] = devices
    for index, sample in enumerate(samples.generated(op, case.dtype, reference=False)):
        if case.compared >= SAMPLES_PER_CASE:
            break
        try:
            expected = case.cpu(raw, sample)
        except NoReference:
            case.without_reference += 1
            continue
        where = lambda name, prop, **more: {"variant": name, "property": prop, "sample_index": index,  # noqa: E731
                                            "sample": sample, **more}
        if devices >= 2:
            with torch.accelerator.device_index(0):  # device 0 current, the inputs on device 1
                _on_other_device(case, raw, sample, expected, other, where)
            ran["other_device"] = ran.get("other_device", 0) + 1
        on_main = samples.on_device(sample, main, op)
        for elsewhere, kind in ((None, "cpu_operand"), (other, "other_device_operand")):
            if elsewhere is not None and devices < 2:
                continue
            for position, variant, operand in placements.mixed(sample, on_main, elsewhere):
                name = "cpu_scalar" if elsewhere is None and operand.dim() == 0 else kind
                taken = placements.mixed_call(case, raw, variant, expected, placements.may_take(op, sample, operand),
                                              where(name, "refused", operand=position, operand_device=elsewhere or "cpu"))
                key = f"{name}_{'taken' if taken else 'refused'}"
                ran[key] = ran.get(key, 0) + 1
        case.compared += 1
    case.evidence["device_variants"] = ran
    if not case.compared:
        case.vacuous = "no sample the CPU runs"


def _on_other_device(case, raw, sample, expected, other: str, where) -> None:
    w = where("other_device", "values", device=other, current_device=torch.accelerator.current_device_index())
    actual = case.device(lambda s: raw(samples.on_device(s, other, case.op)), sample, where=w)
    case.outputs_on(actual, other, sample, w)
    case.compare(actual, expected, w)
    case.variants_compared += 1
