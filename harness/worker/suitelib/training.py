"""Training steps of a model as users run them, on the device against the CPU: hf's `train_step`
check and check-model's `--probe --train`.

Each step: the forward under autocast (float32 cases: to the backend's lower precision, from its
autocast_policy(), or none where it declares none; float16 cases: to float16, with a GradScaler),
the loss's backward (scaled), then the step's second half: the GradScaler's unscale_ (its
non-finite check), gradient clipping to norm CLIP, an AdamW step (foreach, then, where the backend
has its own kernel for aten::_fused_adamw_, fused), the scaler's update. Two judgements a step:

- the first half against the CPU's own step: the loss and, where neither side overflowed, the
  gradients of hf's few checked parameters, judged three ways: the device's may be no further from
  the same step in float32 (no autocast, from the CPU's parameters) than NORMWISE_MULTIPLE times
  the CPU's own autocast result is, normwise (two autocast runs differ by where each computed in
  low precision; the device's policy need not be the CPU's);
- the second half exactly: the CPU replays it from the device's own state before it (parameters,
  scaled gradients, optimizer state, the scaler's scale and growth tracker), with the reference
  for-loop AdamW and its GradScaler, and the device's state after it must be that replay's
  (parameters, exp_avg, exp_avg_sq, step, scale, growth tracker, whether it skipped) at float32's
  tolerance. So the optimizer and scaler kernels are judged on the device's gradients, free of the
  low-precision noise the first half leaves.

At float16 three steps: the scaler starts at 2^30 with a backoff of 2^-16, so the first step
overflows (inf and NaN gradients, a skipped step, the scale backed off to 2^14); the second runs;
in the third one element of one gradient is made inf after the backward, on both sides (an
overflow without a NaN), which the scaler must find. The evidence says which steps were skipped
(`steps`: per step the losses, whether skipped, the scale after it; `inf_path_exercised`).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

import backend_contract
import comparison
from comparison import Mismatch
from dispatch_capture import uncounted
from evidence import dtype_name

LR, EPS, WEIGHT_DECAY, CLIP = 1e-3, 1e-3, 0.01, 1.0  # EPS large: an update continuous in the gradient
STEPS = 2
SCALED_STEPS = 3  # at float16: overflow everywhere, a normal step, one inf (INF_STEP)
INF_STEP = 2
SCALER = {"init_scale": 2.0**30, "backoff_factor": 2.0**-16, "growth_interval": 2000}
TOLERANCES = comparison.MODEL_TOLERANCES



class StepMismatch(Exception):
    """What of a step differs: its message names it."""


@uncounted()  # the harness's write, not an op of the case
def overflow_one(trainer: Trainer, name: str) -> None:
    """One element of one gradient made inf, no NaN anywhere: an overflow the scaler must find."""
    grad = dict(trainer.model.named_parameters())[name].grad
    if grad is not None:
        grad.view(-1)[0] = float("inf")


def lower_precision() -> torch.dtype | None:
    """The backend's autocast dtype (autocast_policy()["dtype"]), or None where it declares no policy."""
    policy = backend_contract.current().function("autocast_policy")
    return policy().get("dtype") if policy else None


def fused_declared() -> bool:
    """Whether the backend has its own kernel for the fused AdamW step (what `fused=True` calls)."""
    return torch._C._dispatch_has_kernel_for_dispatch_key("aten::_fused_adamw_", "PrivateUse1")


class Trainer:
    """One side's model, optimizer and scaler, stepping in halves; `loss_of(model)` is the side's
    forward to a scalar loss, with its inputs."""

    def __init__(self, model: torch.nn.Module, device_type: str, autocast: torch.dtype | None, scaled: bool,
                 optimizer: str, loss_of: Callable[[torch.nn.Module], torch.Tensor]) -> None:
        self.model, self.device_type, self.autocast, self.loss_of = model, device_type, autocast, loss_of
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = make_optimizer(self.params, optimizer)
        self.scaler = torch.amp.GradScaler(device_type, **SCALER) if scaled else None

    def backward(self) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.device_type, dtype=self.autocast or torch.float32, enabled=self.autocast is not None):
            loss = self.loss_of(self.model)
        (self.scaler.scale(loss) if self.scaler else loss).backward()
        return loss.detach()

    def finish(self) -> tuple[float, bool]:
        """The step's second half: the gradient norm clipped from and whether the step was skipped."""
        return finish(self.params, self.optimizer, self.scaler)


def make_optimizer(params: list[torch.Tensor], kind: str) -> torch.optim.Optimizer:
    options = {"foreach": {"foreach": True}, "fused": {"fused": True}, "reference": {"foreach": False}}[kind]
    return torch.optim.AdamW(params, lr=LR, eps=EPS, weight_decay=WEIGHT_DECAY, **options)


def finish(params: list[torch.Tensor], optimizer: torch.optim.Optimizer,
           scaler: torch.amp.GradScaler | None) -> tuple[float, bool]:
    if scaler is not None:
        scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(params, CLIP, foreach=optimizer.defaults.get("foreach"))
    skipped = False
    if scaler is not None:
        before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        skipped = scaler.get_scale() < before  # backed off: the step found inf and was skipped
    else:
        optimizer.step()
    return float(norm), skipped


@uncounted()  # the harness's copies of the device's state
def snapshot(trainer: Trainer) -> dict[str, Any]:
    # copies, also of what the optimizer keeps on the host (AdamW's step counts), which its step
    # changes in place
    state = pytree.tree_map_only(torch.Tensor, lambda t: t.detach().to("cpu", copy=True),
                                 trainer.optimizer.state_dict())
    return {"params": [p.detach().to("cpu", copy=True) for p in trainer.params],
            "grads": [None if p.grad is None else p.grad.detach().to("cpu", copy=True) for p in trainer.params],
            "optimizer": state,
            "scaler": trainer.scaler.state_dict() if trainer.scaler else None}


def replay(before: dict[str, Any], scaled: bool) -> tuple[dict[str, Any], float, bool]:
    """The step's second half on the CPU from the device's state before it, by the reference AdamW."""
    params = [p.clone().requires_grad_() for p in before["params"]]
    for p, g in zip(params, before["grads"]):
        p.grad = None if g is None else g.clone()
    optimizer = make_optimizer(params, "reference")
    if before["optimizer"]["state"]:
        optimizer.load_state_dict(before["optimizer"])
    scaler = None
    if scaled:
        scaler = torch.amp.GradScaler("cpu", **SCALER)
        scaler.load_state_dict(before["scaler"])
        scaler.scale(torch.zeros(()))  # makes its scale and growth tracker from the state loaded
    norm, skipped = finish(params, optimizer, scaler)
    after = {"params": [p.detach() for p in params], "optimizer": optimizer.state_dict(),
             "scaler": scaler.state_dict() if scaler else None}
    return after, norm, skipped


def exactly(what: str, actual: Any, expected: Any) -> None:
    rtol, atol = TOLERANCES["float32"]
    try:
        comparison.compare(actual, expected, rtol, atol)
    except Mismatch as mismatch:
        raise StepMismatch(f"{what}: {str(mismatch)[:1200]}") from None


def run(cpu: torch.nn.Module, dev: torch.nn.Module, dtype: str, device: str, evidence: dict[str, Any],
        cpu_loss_of: Callable, device_loss_of: Callable, checked: list[str], both: Callable) -> bool:
    """The steps: True when every one matched; the first mismatch is evidence["message"]. `dtype`
    float16 scales (GradScaler), anything else autocasts to the backend's lower precision. The
    gradients of the parameters named `checked` are compared. `cpu_loss_of(model)` and
    `device_loss_of(model)` are each side's forward to its loss; `both(cpu, device)` runs the
    CPU's part, then the device's, charging an exception to its side."""
    scaled = dtype == "float16"
    autocast = torch.float16 if scaled else lower_precision()
    low = dtype_name(autocast) if autocast is not None else "float32"
    device_type = device.split(":")[0]
    kinds = ["foreach"] + (["fused"] if fused_declared() else [])
    evidence.update(autocast=low, optimizer="AdamW", clip_norm=CLIP, optimizers_checked=kinds,
                    gradients_checked=checked, normwise_multiple=comparison.NORMWISE_MULTIPLE)
    if "fused" not in kinds:
        evidence["fused"] = "not run: the backend has no kernel of its own for aten::_fused_adamw_"
    try:
        for kind in kinds:
            steps = evidence.setdefault("steps", {})[kind] = []
            host = Trainer(copy.deepcopy(cpu), "cpu", autocast, scaled, "foreach", cpu_loss_of)
            exact = Trainer(copy.deepcopy(cpu), "cpu", None, False, "reference", cpu_loss_of)
            on_device = Trainer(copy.deepcopy(dev), device_type, autocast, scaled, kind, device_loss_of)
            for step in range(SCALED_STEPS if scaled else STEPS):
                where = f"{kind} step {step + 1}"
                # the same step in float32, without autocast, from the CPU's parameters: what both
                # low-precision gradients approximate
                exact.model.load_state_dict(host.model.state_dict())
                cpu_loss, dev_loss = both(host.backward, on_device.backward)
                exact_loss = exact.backward()
                if scaled and step == INF_STEP:
                    for trainer in (host, on_device):
                        overflow_one(trainer, checked[0])
                device_error, _ = three_way_normwise(f"{where}: loss", dev_loss, cpu_loss, exact_loss, autocast)
                evidence["loss_error_device"] = max(evidence.get("loss_error_device", 0.0), device_error)
                before = snapshot(on_device)
                expected, replay_norm, replay_skipped = replay(before, scaled)
                cpu_grads = {name: None if p.grad is None else p.grad.clone()
                             for name, p in host.model.named_parameters() if p.requires_grad}
                scale = host.scaler.get_scale() if scaled else 1.0  # the gradients' factor on both sides
                cpu_norm, cpu_skipped = both(host.finish, lambda: None)[0]
                if not replay_skipped and not cpu_skipped:  # neither overflowed: gradients comparable
                    device_grads = dict(zip(cpu_grads, before["grads"]))
                    exact_grads = {name: p.grad for name, p in exact.model.named_parameters() if p.requires_grad}
                    for name in checked:
                        if (cpu_grads[name] is None) != (device_grads[name] is None):
                            raise StepMismatch(f"{where}: gradient of {name}: "
                                               f"{'no' if device_grads[name] is None else 'a'} gradient on the device")
                        if cpu_grads[name] is not None:
                            errors = three_way_normwise(f"{where}: gradient of {name}", device_grads[name] / scale,
                                                        cpu_grads[name] / scale, exact_grads[name], autocast)
                            for key, value in zip(("gradient_error_device", "gradient_error_cpu"), errors):
                                evidence[key] = max(evidence.get(key, 0.0), value)
                norm, skipped = on_device.finish()
                if skipped != replay_skipped:
                    raise StepMismatch(f"{where}: the device's scaler {'skipped' if skipped else 'took'} the step, "
                                       f"its gradients {'do not ' if not replay_skipped else ''}hold inf or NaN "
                                       f"(the CPU's scaler given the same gradients "
                                       f"{'skipped' if replay_skipped else 'took'} it)")
                after = snapshot(on_device)
                exactly(f"{where}: parameters after the step", after["params"], expected["params"])
                exactly(f"{where}: optimizer state after the step", after["optimizer"]["state"],
                        expected["optimizer"]["state"])
                if scaled:
                    exactly(f"{where}: scaler state after the step", after["scaler"], expected["scaler"])
                if not skipped and not replay_skipped:
                    exactly(f"{where}: gradient norm clipped from", norm, replay_norm)
                steps.append({"loss_cpu": float(cpu_loss), "loss_device": float(dev_loss.cpu()), "skipped": skipped,
                              "cpu_skipped": cpu_skipped, **({"scale": after["scaler"]["scale"]} if scaled else {})})
        if scaled:
            evidence["inf_path_exercised"] = any(s["skipped"] for s in evidence["steps"]["foreach"])
    except StepMismatch as mismatch:
        evidence["message"] = str(mismatch)
        return False
    return True


def three_way_normwise(what: str, actual: torch.Tensor, expected: torch.Tensor, exact: torch.Tensor | None,
                       autocast: torch.dtype | None) -> tuple[float, float]:
    """Judges a gradient computed under autocast: the device's may be no further from the float32
    step's (`exact`) than NORMWISE_MULTIPLE times the CPU's own autocast gradient is, plus the
    autocast dtype's unit roundoff, normwise. Two autocast runs differ by where each computed in
    low precision (the device's policy is not the CPU's): elementwise, a few elements of
    near-cancelling sums differ by far more than the whole does. Returns the device's and the CPU's
    errors, relative to the float32 result's norm."""
    with uncounted():
        a, e = actual.detach().cpu().double(), expected.detach().cpu().double()
        r = exact.detach().cpu().double() if exact is not None else e
    if a.shape != e.shape or not bool(torch.isfinite(a).all()) or not bool(torch.isfinite(e).all()):
        raise StepMismatch(f"{what}: shape {list(a.shape)} or non-finite values on the device, "
                           f"{list(e.shape)} on the CPU")
    norm = float(r.norm()) or 1.0
    device, cpu = float((a - r).norm()) / norm, float((e - r).norm()) / norm
    unit = torch.finfo(autocast).eps / 2 if autocast is not None else torch.finfo(torch.float32).eps
    allowed = comparison.NORMWISE_MULTIPLE * max(cpu, unit)
    if device > allowed:
        raise StepMismatch(f"{what}: the device's is {device:.3g} off the float32 step's normwise, the CPU's "
                           f"{cpu:.3g} (allowed {allowed:.3g}: {comparison.NORMWISE_MULTIPLE:g} times the CPU's)")
    return device, cpu
