"""The ops suite's `autocast` check: an op of the backend's autocast policy, run under
torch.autocast(device_type=<device>, dtype=<the backend's autocast dtype>), computes in the dtype
the policy says, and the values the CPU computes in that dtype.

Which OpInfos: those whose aten op (the OpInfo's aten_name, or its name without
"nn.functional.": conv2d; or, for a composite, the policy op it ends in: VIA, reviewed) is an
overload with a kernel for the device's autocast dispatch key (AutocastPrivateUse1): what the
backend registers, so a backend without autocast has no cases.
Dtypes: float32 (where the lower-precision list casts down) and bfloat16 (where the float32
lists cast up), those the op supports on the CPU.

What the policy says comes from the backend's declaration, `autocast_policy()` (torch_neuronsim:
{"dtype": bfloat16, "lower_precision_fp": [...], "fp32": [...], ...}, the lists of ATen's CUDA
policy): for each sample, the dtype its floating inputs (float64 excepted, as autocast leaves it)
are cast to before the op runs: the autocast dtype (lower_precision_fp), float32 (fp32,
fp32_append_dtype, and fp32_set_opt_dtype unless the sample passes dtype=), the widest input
dtype (promote). The CPU runs the op on the sample cast so, without autocast: the device's
result must have its dtype and, within the tolerance of the dtype computed in, its values.
`banned` ops (binary_cross_entropy) must raise under autocast. An overload registered but not
declared is an error of the backend's declaration.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch.utils._pytree as pytree

from suitelib import opinfo
from evidence import dtype_name
from dispatch_capture import uncounted
from sides import NoReference, Verdict
from vocabulary import Outcome

import suite_api

from suitelib.opinfo import calls, samples

DESCRIPTION = ("under torch.autocast on the device, the ops of the backend's autocast policy compute in the "
               "policy's dtype (lower-precision list: the autocast dtype; float32 lists: float32) and match the "
               "CPU run at that dtype")

DTYPES = (torch.float32, torch.bfloat16)
CASTS_TO_FP32 = ("fp32", "fp32_append_dtype")


@functools.cache
def _registered() -> dict[str, tuple[str, ...]]:
    """aten op name -> its overloads with a kernel for AutocastPrivateUse1 ("aten::mm", ...)."""
    found: dict[str, list[str]] = {}
    for name in torch._C._dispatch_get_all_op_names():
        if name.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastPrivateUse1"):
            found.setdefault(name.removeprefix("aten::").split(".")[0], []).append(name)
    return {base: tuple(sorted(names)) for base, names in found.items()}


# OpInfos whose op is a composite ending in an op of the policy, which then decides its result's
# dtype (reviewed: under autocast on the device, each returns the dtype its inputs cast to that
# op's policy dtype give on the CPU). Composites that mix policies (cov, pinv, multi-head
# attention, most composite losses; trapezoid's and pairwise_distance's arithmetic before their
# sum or norm stays in bfloat16; ldexp's pow has an integer operand) are not here.
VIA = {
    **{f"nn.functional.interpolate.{mode}": op for mode, op in (
        ("nearest", "upsample_nearest2d"), ("nearest-exact", "_upsample_nearest_exact2d"),
        ("linear", "upsample_linear1d"), ("bilinear", "upsample_bilinear2d"), ("bicubic", "upsample_bicubic2d"),
        ("trilinear", "upsample_trilinear3d"))},
    "nn.functional.upsample_nearest": "upsample_nearest2d",
    "nn.functional.upsample_bilinear": "upsample_bilinear2d",
    "nn.functional.softmin": "softmax",  # softmax(-x)
    "nn.functional.normalize": "linalg_vector_norm",  # x / norm
    "linalg.norm": "linalg_vector_norm",
    "square": "pow",
    "__rpow__": "pow",
    "__rdiv__": "reciprocal",  # other * reciprocal(x)
    "__rmatmul__": "matmul",
}


def _base_name(op) -> str | None:
    """The aten op the OpInfo calls, when it has autocast kernels: its aten_name, its name
    without "nn.functional." (conv2d), or with "." as "_" (linalg.vector_norm), or the policy op
    a composite ends in (VIA). Other namespaces (masked., sparse., special.) are Python
    composites or other ops."""
    for name in (VIA.get(opinfo.subject(op)), op.aten_name, op.name.removeprefix("nn.functional."), op.name.replace(".", "_")):
        if name and name in _registered():
            return name
    return None


def applies(op, dtype: torch.dtype) -> bool:
    return dtype in DTYPES and _base_name(op) is not None


def _policy_of(backend, overloads: tuple[str, ...]) -> tuple[str, torch.dtype]:
    """(policy, autocast dtype) the backend declares for the overloads; a Verdict when it
    declares none or several."""
    declare = getattr(backend, "autocast_policy", None)
    if not callable(declare):  # nothing to judge its autocast kernels against: not the backend's error
        raise suite_api.Skip(f"the backend declares no autocast policy (no autocast_policy(); docs/backends.md), "
                             f"so its autocast kernels for {', '.join(overloads)} cannot be judged")
    declared = declare()
    kinds = {kind for kind, names in declared.items() if isinstance(names, list) for name in overloads
             if name in names}
    undeclared = [name for name in overloads if not any(isinstance(v, list) and name in v for v in declared.values())]
    if undeclared or len(kinds) != 1:
        raise Verdict(Outcome.ERROR, {
            "exception_type": "LookupError",
            "message": f"autocast kernels for {', '.join(overloads)}: the backend's autocast_policy() declares "
                       + (f"none for {', '.join(undeclared)}" if undeclared else f"several policies {sorted(kinds)}")})
    return kinds.pop(), declared.get("dtype", torch.get_autocast_dtype(backend_device_type()))


def backend_device_type() -> str:
    return torch._C._get_privateuse1_backend_name()


def _floating(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


def compute_dtype(policy: str, autocast_dtype: torch.dtype, sample) -> torch.dtype | None:
    """The dtype the policy casts the sample's floating inputs to, None when it casts nothing."""
    if policy == "lower_precision_fp":
        return autocast_dtype
    if policy in CASTS_TO_FP32 or (policy == "fp32_set_opt_dtype" and sample.kwargs.get("dtype") is None):
        return torch.float32
    if policy == "promote":
        dtypes = [t.dtype for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if _floating(t)]
        return functools.reduce(torch.promote_types, dtypes) if dtypes else None
    return None


@suite_api.check("autocast", DESCRIPTION, applies=applies, api=False)
def run(case) -> None:
    op, device = case.op, case.ctx.device
    device_type = torch.device(device).type
    base = _base_name(op)
    overloads = _registered()[base]
    policy, autocast_dtype = _policy_of(case.ctx.backend, overloads)
    case.evidence.update({"policy": policy, "autocast_dtype": dtype_name(autocast_dtype), "overloads": list(overloads)})

    def forward(sample):
        return calls.forward(op, sample)

    def under_autocast(sample):
        with torch.autocast(device_type=device_type, dtype=autocast_dtype):
            return forward(sample)

    for index, sample in enumerate(samples.generated(op, case.dtype, reference=False)):
        where = {"variant": "autocast", "sample_index": index, "sample": sample}
        if policy == "banned":
            try:
                case.waited_on_device(lambda s: under_autocast(samples.on_device(s, device, case.op)), sample)
            except RuntimeError:
                case.compared += 1
                continue
            raise case.fail(f"{base} ran under autocast; the policy bans it (as CUDA's does)",
                            {**where, "property": "banned"})
        target = compute_dtype(policy, autocast_dtype, sample)
        with uncounted():  # the CPU's inputs, cast by the harness: no op of the case's
            cast = sample if target is None else sample.transform(
                lambda t: t.detach().to(target).requires_grad_(t.requires_grad) if _floating(t) else t)
        try:
            expected = case.cpu(forward, cast)
        except NoReference:
            case.without_reference += 1
            continue
        actual = case.device(lambda s: under_autocast(samples.on_device(s, device, case.op)), sample, where=where)
        got = [t.dtype for t in pytree.tree_leaves(actual) if isinstance(t, torch.Tensor)]
        want = [t.dtype for t in pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
        if got != want:
            raise case.fail(
                f"under autocast the device's {base} returned {[dtype_name(d) for d in got]}, the policy "
                f"({policy}, autocast dtype {dtype_name(autocast_dtype)}) gives {[dtype_name(d) for d in want]}",
                {**where, "property": "dtype", "device_dtypes": [dtype_name(d) for d in got],
                 "expected_dtypes": [dtype_name(d) for d in want]})
        case.rtol, case.atol, source, case.tolerance_overridden = case.tolerance_at(op, target or case.dtype, case.ctx)
        case.evidence.update({"rtol": case.rtol, "atol": case.atol, "tolerance_source": source,
                              "computed_in": dtype_name(target or case.dtype)})
        case.compare(actual, expected, {**where, "property": "values"}, again=case.again(forward, cast))
        case.compared += 1
