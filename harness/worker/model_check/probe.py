"""--probe: the tiny model run for real, on the device and on the CPU, with the worker's op
tracking: what fell back or failed, how far the outputs are apart and the first module whose
output differs, where its tensors are; with --train, its training steps as the hf suite's
train_step check runs them."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from case_context import Context, compile_cache_delta, compile_estimate, declared_compile_latency
from evidence import dtype_name, exception_evidence
from vocabulary import Outcome

from .calls import call, first_tensor
from .placement import HostOps, misplaced, placed


class ModuleOutputs:
    """Each module's first tensor output, in the order the forwards end (inner modules before the
    modules holding them), copied to the CPU outside every dispatch mode: the harness's copies are
    not the model's ops."""

    def __init__(self, model) -> None:
        self.outputs: list[tuple[str, str, Any]] = []
        self.handles = [module.register_forward_hook(self._hook(path)) for path, module in model.named_modules()]

    def _hook(self, path: str):
        def hook(module, args, output) -> None:
            from torch.utils._python_dispatch import _disable_current_modes

            tensor = first_tensor(output)
            if tensor is not None:
                with _disable_current_modes():
                    self.outputs.append((path, type(module).__name__, tensor.detach().to("cpu", copy=True)))
        return hook

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def first_difference(device: ModuleOutputs, cpu: ModuleOutputs, rtol: float, atol: float) -> dict[str, Any] | None:
    """The first module (in the order forwards end) whose output on the device differs from its
    output on the CPU beyond the tolerance: where a wrong output starts."""
    from comparison import Mismatch, compare

    seen: dict[str, int] = defaultdict(int)
    expected: dict[tuple[str, int], Any] = {}
    for path, _, tensor in cpu.outputs:
        expected[(path, seen[path])] = tensor
        seen[path] += 1
    seen.clear()
    for path, kind, tensor in device.outputs:
        reference = expected.get((path, seen[path]))
        seen[path] += 1
        if reference is None:
            continue
        try:
            compare(tensor, reference, rtol, atol)
        except Mismatch as mismatch:
            return {"module": path or "(the whole model)", "type": kind, "max_abs_error": mismatch.max_abs,
                    "message": str(mismatch)[:500]}
    return None


def forward_against_cpu(rebuild_tiny, device: str, device_map: str | None) -> dict[str, Any]:
    """The tiny model's forward on the CPU and, as the user's setup leaves it (placed()), on the
    device. The outputs' distance is the suites' (comparison.errors: finite elements only), and
    they are judged with the suites' comparison at the model's dtype (a mismatch is outcome `fail`,
    naming the first module whose output differs); an exception is recorded as its evidence. The
    result's "placement": where the tensors are after the setup, and the ops the device forward
    ran on CPU tensors."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from comparison import MODEL_TOLERANCES, Mismatch, compare, errors

    device_model, device_inputs, model, inputs, setup = placed(rebuild_tiny, device, device_map)
    result: dict[str, Any] = {}
    device_type = torch.device(device).type
    host = HostOps(device_model, device_type)
    floating = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    rtol, atol = MODEL_TOLERANCES.get(dtype_name(floating), MODEL_TOLERANCES["float32"])
    device_outputs, cpu_outputs = ModuleOutputs(device_model), ModuleOutputs(model)

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            outputs = func(*args, **kwargs)
            host.record(func, args, kwargs, outputs)
            return outputs

    try:
        with torch.no_grad():
            expected = call(model, inputs)
            with Watch():
                actual = call(device_model, device_inputs)
        result.update(max_abs_error=errors(first_tensor(actual), first_tensor(expected))[0], outcome="ran",
                      rtol=rtol, atol=atol)
        try:
            compare(first_tensor(actual), first_tensor(expected), rtol, atol)
        except Mismatch as mismatch:
            result.update(outcome=Outcome.FAIL, message=f"the output differs from the CPU's: {str(mismatch)[:500]}",
                          max_abs_error=mismatch.max_abs)
            if where := first_difference(device_outputs, cpu_outputs, rtol, atol):
                result["first_differing_module"] = where
    except Exception as exc:
        result.update(exception_evidence(exc, limit=1000), outcome=Outcome.ERROR)
    finally:
        device_outputs.remove()
        cpu_outputs.remove()
    findings = misplaced(device_model, device_inputs, device_type) + host.findings()
    result["placement"] = {"setup": setup, "findings": findings, "device_ops": host.device_ops,
                           "on_device": any(t.device.type == device_type for t in
                                            [*device_model.parameters(), *device_model.buffers()])}
    return result


def probe(rebuild_tiny, backend, device: str, device_map: str | None = None) -> dict[str, Any]:
    """Runs the tiny model's forward for real on the device and on the CPU, with the worker's op
    tracking, and watches where its tensors are (the result's "placement")."""
    ctx = Context(backend, device, 0)
    ctx.clear_tracking()
    before = ctx.compile_cache()
    with ctx.capture:
        result = forward_against_cpu(rebuild_tiny, device, device_map)
    if after := ctx.compile_cache():  # the executables the model needed, from the cache or compiled
        result["compile_cache"] = compile_cache_delta(before, after)
        if estimate := compile_estimate(result["compile_cache"], declared_compile_latency(backend)):
            result["compile_estimate"] = estimate
    ops = ctx.tracked_ops()
    result.update(ops)
    result.update(ctx.observation(ops))
    return result


def train_probe(rebuild_tiny, device: str, hf: bool) -> dict[str, Any]:
    """--probe --train: the tiny model's training steps on the device against the CPU, as the hf
    suite's train_step check runs them (suitelib.training: autocast to the backend's lower
    precision, backward, clipping, AdamW, the step judged against the CPU's replay of it). The
    loss: a transformers model's own (labels = the input ids); a script's, the mean square of its
    first output."""
    from sides import Stage, both
    from suitelib import training

    device_model, device_inputs, model, inputs, _ = placed(rebuild_tiny, device, None)

    def loss_of(data):
        if hf:
            return lambda m: m(**data, labels=data["input_ids"], use_cache=False).loss
        return lambda m: first_tensor(call(m, data)).float().pow(2).mean()

    names = [n for n, p in model.named_parameters() if p.requires_grad]
    checked = sorted({names[0], names[len(names) // 2], names[-1]}) if names else []
    evidence: dict[str, Any] = {}
    try:
        matched = training.run(model, device_model, "float32", device, evidence, loss_of(inputs),
                               loss_of(device_inputs), checked, both)
        evidence["outcome"] = "ran" if matched else Outcome.FAIL
    except Stage as stage:
        evidence.update(exception_evidence(stage.cause, limit=1000), outcome=Outcome.ERROR, stage=stage.stage)
    evidence.pop("steps", None)
    return evidence
