"""The operator suite: every OpInfo of the installed torch's op_db, at every dtype the op
supports on the CPU, checked on the device against the CPU.

Case ids: ops/<subject>/<dtype>/<check>, subject = OpInfo name plus ".variant_test_name".
Checks:
  forward     each sample input run on the device and on the CPU, results compared
  out         the out= variant (OpInfos with supports_out)
  inplace     the in-place variant (OpInfos that have one)
  backward    gradients of every input compared (OpInfos that support autograd, at dtypes
              with backward support)
  forward_ad  forward-mode jvp compared (OpInfos with supports_forward_ad)
Tolerances: torch.testing's per-dtype defaults, the OpInfo's own toleranceOverride /
precisionOverride decorators that apply to every test or to TestCommon.test_compare_cpu, then
suites/ops/tolerances.json. The tolerance used and its source are part of the evidence; what
"differs" means is harness/worker/comparison.py's, shared with the other suites.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

import torch
import torch.utils._pytree as pytree
from torch.autograd import forward_ad as fwAD
from torch.testing._comparison import default_tolerances
from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import DecorateInfo

from comparison import Mismatch, compare, to_device
from evidence import dtype_name, exception_evidence
from vocabulary import Outcome

CHECKS = ("forward", "out", "inplace", "backward", "forward_ad")


def describe_suite() -> dict[str, Any]:
    """What the suite declares of itself (suites/README.md): reports render from it."""
    return {
        "noun": "OpInfo",
        "nouns": "OpInfos",
        "checks": {
            "forward": "each sample input run on the device and on the CPU, results compared",
            "out": "the out= variant",
            "inplace": "the in-place variant",
            "backward": "gradients of every input",
            "forward_ad": "forward-mode jvp",
        },
        "native_phrase": "run natively at every dtype and check",
    }
OVERRIDES_FILE = Path(__file__).with_name("tolerances.json")


def subject_of(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


OPS = {subject_of(op): op for op in op_db}


def checks_for(op, dtype: torch.dtype) -> list[str]:
    checks = ["forward"]
    if op.supports_out:
        checks.append("out")
    if op.inplace_variant is not None:
        checks.append("inplace")
    grad_dtypes = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
    if dtype in grad_dtypes:
        checks.append("backward")
        if op.supports_forward_ad:
            checks.append("forward_ad")
    return checks


def list_cases() -> Iterable[dict[str, str]]:
    for subject, op in sorted(OPS.items()):
        for dtype in sorted(op.supported_dtypes("cpu"), key=dtype_name):
            for check in checks_for(op, dtype):
                name = dtype_name(dtype)
                yield {"id": f"ops/{subject}/{name}/{check}", "suite": "ops", "subject": subject,
                       "dtype": name, "check": check}


# --- tolerances ---------------------------------------------------------------------------

def _project_overrides() -> dict[str, Any]:
    if not OVERRIDES_FILE.is_file():
        return {}
    data = json.loads(OVERRIDES_FILE.read_text())
    return data.get("overrides", {})


PROJECT_OVERRIDES = _project_overrides()


def tolerance(op, dtype: torch.dtype) -> tuple[float, float, str]:
    """(rtol, atol, source) for comparing this op's device results at dtype."""
    rtol, atol = default_tolerances(torch.empty(0, dtype=dtype))
    source = "torch.testing default"
    for decorator in _upstream_decorations(op, dtype):
        if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
            atol, rtol = decorator.d[dtype].atol, decorator.d[dtype].rtol
            source = "OpInfo toleranceOverride"
        elif isinstance(decorator, precisionOverride) and dtype in decorator.d:
            atol = decorator.d[dtype]
            source = "OpInfo precisionOverride"
    project = PROJECT_OVERRIDES.get(subject_of(op), {}).get(dtype_name(dtype))
    if project:
        rtol, atol = project.get("rtol", rtol), project.get("atol", atol)
        source = "suites/ops/tolerances.json"
    return rtol, atol, source


def _upstream_decorations(op, dtype: torch.dtype):
    """The decorators OpInfo applies to TestCommon.test_compare_cpu at `dtype` on any device."""
    for info in op.decorators:
        if isinstance(info, DecorateInfo):
            if info.cls_name not in (None, "TestCommon") or info.test_name not in (None, "test_compare_cpu"):
                continue
            if info.device_type is not None or (info.dtypes is not None and dtype not in info.dtypes):
                continue
            if not info.active_if:
                continue
            yield from info.decorators
        else:
            yield info  # a bare decorator applies to every test of the OpInfo


def values_not_comparable(op, dtype: torch.dtype) -> str | None:
    """Upstream's reason when it skips comparing this op's values with the CPU (uninitialized or
    random outputs), else None. Such cases compare output structure, shapes and dtypes only."""
    for decorator in _upstream_decorations(op, dtype):
        probe = decorator(lambda: None) if callable(decorator) else None
        if getattr(probe, "__unittest_skip__", False):
            return str(getattr(probe, "__unittest_skip_why__", "")) or "skipped upstream"
    return None


# --- running ------------------------------------------------------------------------------

def describe(sample) -> str:
    def shape(t):
        return f"{dtype_name(t.dtype)}{list(t.shape)}" if isinstance(t, torch.Tensor) else repr(t)[:40]

    args = ", ".join(shape(a) for a in [sample.input, *sample.args])
    kwargs = ", ".join(f"{k}={shape(v)}" for k, v in sample.kwargs.items())
    return f"({args}{', ' if kwargs else ''}{kwargs})"


def _forward(op, sample):
    return sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))


def _out(op, sample, device: str | None):
    expected_shape = _forward(op, sample)
    out = pytree.tree_map(lambda t: torch.empty_like(t) if isinstance(t, torch.Tensor) else t, expected_shape)
    result = op(sample.input, *sample.args, **sample.kwargs, out=out)
    return out if result is None else result


def _inplace(op, sample):
    target = sample.input.clone()
    op.inplace_variant(target, *sample.args, **sample.kwargs)
    return target


def _differentiable(tensors) -> list[torch.Tensor]:
    return [t for t in tensors if isinstance(t, torch.Tensor) and t.requires_grad]


def _backward(op, sample):
    inputs = _differentiable(pytree.tree_leaves([sample.input, sample.args, sample.kwargs]))
    outputs = _differentiable(pytree.tree_leaves(_forward(op, sample)))
    if not inputs or not outputs:
        raise LookupError("no differentiable inputs or outputs")
    loss = sum(o.to(torch.float32).sum() if not o.is_complex() else o.abs().sum() for o in outputs)
    return torch.autograd.grad(loss, inputs, allow_unused=True)


def _forward_ad(op, sample):
    with fwAD.dual_level():
        def dual(t):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                return fwAD.make_dual(t.detach(), torch.ones_like(t))
            return t

        s = sample.transform(dual)
        outputs = pytree.tree_leaves(op(s.input, *s.args, **s.kwargs))
        return [fwAD.unpack_dual(o).tangent for o in outputs if isinstance(o, torch.Tensor)]


def run_case(case_id: str, ctx) -> tuple[str, dict[str, Any]]:
    suite, subject, dtype_str, check = case_id.split("/")
    if suite != "ops" or subject not in OPS or check not in CHECKS:
        raise KeyError(f"unknown case {case_id}")
    op = OPS[subject]
    dtype = getattr(torch, dtype_str)
    rtol, atol, source = tolerance(op, dtype)
    evidence: dict[str, Any] = {"rtol": rtol, "atol": atol, "tolerance_source": source}
    not_comparable = values_not_comparable(op, dtype)

    run: Callable[[Any], Any] = {
        "forward": lambda s: _forward(op, s),
        "out": lambda s: _out(op, s, None),
        "inplace": lambda s: _inplace(op, s),
        "backward": lambda s: _backward(op, s),
        "forward_ad": lambda s: _forward_ad(op, s),
    }[check]
    needs_grad = check in ("backward", "forward_ad")
    torch.manual_seed(ctx.seed)
    samples = list(op.sample_inputs("cpu", dtype, requires_grad=needs_grad))
    compared = skipped = 0
    first_cpu_error = ""
    max_abs = max_rel = 0.0
    for index, sample in enumerate(samples):
        try:
            torch.manual_seed(ctx.seed)
            expected = run(sample)
        except Exception as exc:
            skipped += 1  # no CPU reference for this sample: nothing to compare against
            first_cpu_error = first_cpu_error or f"{type(exc).__name__}: {str(exc)[:300]}"
            continue
        device_sample = to_device(sample, ctx.device)
        try:
            torch.manual_seed(ctx.seed)
            actual = run(device_sample)
        except Exception as exc:
            evidence.update(exception_evidence(exc), sample_index=index, sample=describe(sample))
            return Outcome.ERROR, evidence
        try:
            try:
                abs_err, rel_err = compare(actual, expected, rtol, atol)
            except Mismatch:
                if not not_comparable:
                    raise
                # Uninitialized or random outputs: only structure, shapes and dtypes must match.
                abs_err, rel_err = compare(actual, expected, rtol, atol, values=False)
                evidence["values_not_compared"] = f"upstream does not compare them: {not_comparable}"
        except Mismatch as mismatch:
            evidence.update({
                "max_abs_error": mismatch.max_abs,
                "max_rel_error": mismatch.max_rel,
                "first_failing_sample": index,
                "sample": describe(sample),
                "message": str(mismatch)[:2000],
                "samples_compared": compared,
            })
            return Outcome.FAIL, evidence
        compared += 1
        max_abs, max_rel = max(max_abs, abs_err), max(max_rel, rel_err)
    evidence.update({"samples_compared": compared, "samples_without_reference": skipped,
                     "max_abs_error": max_abs, "max_rel_error": max_rel})
    if compared == 0:
        evidence.update({"exception_type": "NoReference",
                         "message": f"no sample input produced a CPU reference result (first CPU error: "
                                    f"{first_cpu_error})", "where": "harness"})
        return Outcome.ERROR, evidence
    return Outcome.PASS, evidence
