"""The `layout` check: what a result is, beyond its values. For every sample input (and, for the
ops whose output layout follows the input's, the sample with its 4-d and 5-d tensors in
channels_last memory format) each output tensor of the device must have the CPU output's

- dtype, shape and device type (the device's, where the CPU's is the CPU),
- strides, where PyTorch defines them: ops with a `memory_format` argument (clone, contiguous,
  to, the *_like factories) and the families that keep an input's memory format (pointwise ops,
  convolution, pooling, normalization, upsampling, padding, pixel shuffles); compared on the
  dimensions that matter (longer than 1, as torch._prims_common.check_significant_strides does),
- view-ness: an output that shares storage with an input on the CPU (a view, or self) must share
  storage with the same input on the device, and one that the CPU computes into new memory must
  not alias any input.

Runs at one dtype per OpInfo (sample_variants.representative_dtype): layouts do not depend on it. Evidence
names the output (its pytree path), both stride tuples, or the aliasing found.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable, Iterable

import torch
import torch.utils._pytree as pytree
from torch._prims_common import check_significant_strides
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

from sides import NoReference

import suite_api

from suitelib import reviewed
from suitelib.opinfo import facts, sample_variants, samples

DESCRIPTION = ("output metadata: dtype, shape, device, strides where PyTorch defines them (memory_format ops; "
               "pointwise, convolution, pooling, normalization ops also on channels_last inputs) and view-ness "
               "(a view on the CPU is a view on the device, a copy never aliases)")

def applies(op, dtype: torch.dtype) -> bool:
    return dtype == sample_variants.representative_dtype(op)


def _is_pointwise(op) -> bool:
    if isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo)):
        return True
    packet = getattr(torch.ops.aten, op.aten_name, None) if "." not in op.aten_name else None
    overload = getattr(packet, "default", None) if packet is not None else None
    return overload is not None and torch.Tag.pointwise in overload.tags


def _takes_memory_format(op) -> bool:
    return any("memory_format" in names for names in sample_variants.schema_arguments(op))


@reviewed.document
@cache
def keeps_memory_format_facts() -> dict[str, dict[str, Any]]:
    """facts.json's keeps_memory_format facts, each about an OpInfo whose layout variants only the
    fact makes: neither pointwise nor taking memory_format."""
    return facts.applying("keeps_memory_format", lambda op, _: not _takes_memory_format(op) and not _is_pointwise(op),
                          "it is pointwise or takes memory_format, so its layout variants are made without it")


def _layout_variants(op) -> Callable[[Any], Iterable[tuple[str, Any]]] | None:
    """How to make the variants whose output strides PyTorch defines, for ops where it defines
    them (see the module's docstring), else None."""
    if _takes_memory_format(op):
        return sample_variants.memory_formats
    if facts.about(op, "keeps_memory_format") is not None or _is_pointwise(op):
        return lambda sample: [("channels_last", v)] if (v := sample_variants.channels_last(sample)) else []
    return None


def _storage(t: torch.Tensor) -> int | None:
    """The address of `t`'s storage, or None where it has no memory to share (zero bytes)."""
    if t.layout != torch.strided or t.untyped_storage().nbytes() == 0:
        return None
    return t.untyped_storage().data_ptr()


def _aliased(output: torch.Tensor, inputs: list[torch.Tensor]) -> set[int]:
    """The positions of the inputs whose storage `output` shares (comparison.to_device keeps the
    CPU's sharing between inputs, so positions mean the same on both sides)."""
    mine = _storage(output)
    if mine is None:
        return set()
    return {i for i, t in enumerate(inputs) if _storage(t) == mine}


def _describe_alias(positions: set[int]) -> str:
    return ", ".join(f"input {i}" for i in sorted(positions)) if positions else "no input"


def _compare_layout(case, index: int, name: str, sample, compare_strides: bool) -> bool:
    """One sample (variant `name`): the device's outputs against the CPU's. Returns False when the
    CPU cannot run it (no reference)."""
    op = case.op
    run = lambda s: op(s.input, *s.args, **s.kwargs)  # noqa: E731 (the raw outputs: layouts are the op's)
    strided = lambda s: [t for t in samples.tensors(s) if t.layout == torch.strided]  # noqa: E731
    try:  # the inputs the CPU ran on (its own copy of the sample): what its outputs may alias
        expected, cpu_inputs = case.cpu(lambda s: (run(s), strided(s)), sample)
    except NoReference:
        return False
    where = {"variant": name, "sample_index": index, "sample": sample}
    dev_sample = samples.on_device(sample, case.ctx.device, case.op)
    dev_inputs = strided(dev_sample)
    actual = case.device(run, dev_sample, where=where)
    a_leaves, a_spec = pytree.tree_flatten_with_path(actual)
    e_leaves, e_spec = pytree.tree_flatten_with_path(expected)
    if a_spec != e_spec:
        raise case.fail(f"output structure differs: {a_spec} on the device, {e_spec} on the CPU",
                        {**where, "property": "structure"})
    device_type = torch.device(case.ctx.device).type
    # A result belongs on the device when the op had a device input or was asked for the device
    # (a factory without a device argument, or `to("cpu")`, makes a CPU tensor on both sides).
    expects_device = not samples.names_device(dev_sample, "cpu") and (
        any(t.device.type == device_type for t in dev_inputs) or samples.names_device(dev_sample, device_type))
    for (path, a), (_, e) in zip(a_leaves, e_leaves):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor) or e.layout != torch.strided:
            continue
        output = "output" + pytree.keystr(path)
        found = {**where, "output": output}
        if a.dtype != e.dtype or a.shape != e.shape:
            raise case.fail(f"{output} is {a.dtype}{list(a.shape)} on the device, {e.dtype}{list(e.shape)} on "
                            f"the CPU", {**found, "property": "dtype and shape"})
        if expects_device and a.device.type != device_type:
            raise case.fail(f"{output} is on {a.device}, not on the device", {**found, "property": "device"})
        if compare_strides and a.layout == torch.strided:
            same, dim = check_significant_strides(a, e, only_cuda=False)
            if not same:
                raise case.fail(f"{output} has strides {tuple(a.stride())} on the device, {tuple(e.stride())} on "
                                f"the CPU (dimension {dim} differs; shape {list(e.shape)})",
                                {**found, "property": "strides", "device_strides": list(a.stride()),
                                 "cpu_strides": list(e.stride())})
        cpu_alias, dev_alias = _aliased(e, cpu_inputs), _aliased(a, dev_inputs)
        if cpu_alias != dev_alias and _storage(a) is not None:
            kind = "a view of" if cpu_alias else "new memory, not aliasing"
            raise case.fail(f"{output} shares storage with {_describe_alias(dev_alias)} on the device; on the CPU it "
                            f"is {kind} {_describe_alias(cpu_alias) if cpu_alias else 'any input'}",
                            {**found, "property": "view" if cpu_alias else "copy",
                             "cpu_aliases": sorted(cpu_alias), "device_aliases": sorted(dev_alias)})
        case.outputs_checked += 1
    case.variants_compared += 1
    return True


@suite_api.check("layout", DESCRIPTION, applies=applies)
def run(case) -> None:
    op = case.op
    variants = _layout_variants(op)
    case.outputs_checked = 0
    case.evidence["strides_compared"] = variants is not None
    for index, sample in enumerate(samples.generated(op, case.dtype, reference=False)):
        if not _compare_layout(case, index, "sample", sample, variants is not None):
            case.without_reference += 1
            continue
        for name, variant in variants(sample) if variants else ():
            if not _compare_layout(case, index, name, variant, True):
                case.variants_without_reference += 1
        case.compared += 1
    case.evidence["outputs_checked"] = case.outputs_checked
