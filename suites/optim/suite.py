"""The optimizer suite: every OptimizerInfo of the installed torch's optim_db with the optimizer
inputs it declares, parameters and gradients on the device, steps compared with the same steps on
the CPU.

Optimizer inputs are upstream's _get_optim_inputs_including_global_cliquey_kwargs for the device
type under test: every kwargs combination of optim_inputs_func(device), each with the for-loop
implementation and, as separate inputs, foreach=True where torch has foreach kernels for the
device type (torch counts the PrivateUse1 backend among them) and fused=True where the
OptimizerInfo's supports_fused_on names the device type (it names cpu, cuda, xpu, mps: a
PrivateUse1 device gets no fused input, as upstream's tests would give it none).
differentiable=True (autograd through the step) is left out, as most of upstream's tests leave it.
Each case records the implementation it ran and which ones upstream runs on this device type.

Case ids: optim/<subject>/<dtype>/<check>, subject = the OptimizerInfo's name, plus
".<variant>" from the optimizer input's description ("nonzero weight_decay & foreach" ->
AdamW.nonzero_weight_decay_foreach; the plain "default" input is the bare name). dtype: float32
(upstream's @optims default). Checks:
  step             STEPS steps (a closure evaluating a quadratic loss, gradients computed on each
                   side), parameters compared after every step
  lr_scheduler     the same with each of the OptimizerInfo's scheduler_inputs stepped after every
                   step (ReduceLROnPlateau given the loss); parameters and learning rates compared
  state_dict       after STEPS steps: optimizer.state_dict() (state and param_groups) against the
                   CPU's, and every non-scalar state tensor on the device
  load_state_dict  the CPU optimizer's state_dict after STEPS steps loaded into a fresh optimizer
                   over the device copies of the CPU's parameters: the state must arrive on the
                   device, and one more step must match the CPU's next step (parameters and state)
Tolerances: torch.testing's float32 defaults, then the OptimizerInfo's toleranceOverride for
TestOptimRenewed.test_mixed_device_dtype (parameters on several devices) and, for foreach and
fused inputs, test_foreach_matches_forloop / test_fused_matches_forloop; what "differs" means is
harness/worker/comparison.py's. A CPU that cannot run the input is an `error` with
`where: harness`.
"""

from __future__ import annotations

import copy
import re
import warnings
from functools import cache
from typing import Any, Callable, Iterable

import torch
import torch.utils._pytree as pytree
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.testing._internal.common_optimizers import (
    _get_optim_inputs_including_global_cliquey_kwargs,
    optim_db,
)
from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices

from comparison import to_device
from dispatch_capture import uncounted
from evidence import dtype_name
from suitelib import info_decorators
from sides import NoReference, Sides, Verdict
import suite_api
from suitelib.public_api import class_entries
from vocabulary import Outcome

STEPS = 3
DTYPES = (torch.float32,)
IMPLEMENTATIONS = ("foreach", "fused")  # the flags that choose an implementation; differentiable is left out


SUITE = suite_api.Suite(__name__, noun="optimizer", nouns="optimizers", native_phrase="run natively with every check")


def variant_of(desc: str) -> str:
    """An optimizer input's description as a case-id variant: "nonzero weight_decay & foreach" ->
    "nonzero_weight_decay_foreach", "default & foreach" -> "foreach", "default" -> ""."""
    slug = re.sub(r"[^0-9a-z]+", "_", desc.lower()).strip("_")
    if slug == "default":
        return ""
    return slug.removeprefix("default_")


@cache
def subjects() -> dict[str, tuple[Any, Any]]:
    """subject -> (OptimizerInfo, OptimizerInput): ids made unique (a repeated variant gets a
    numeric suffix in the order upstream lists its inputs, so ids stay stable)."""
    found: dict[str, tuple[Any, Any]] = {}
    for info in optim_db:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inputs = _get_optim_inputs_including_global_cliquey_kwargs(suite_api.device_type(), torch.float32, info,
                                                                       skip=("differentiable",))
        for optim_input in inputs:
            variant = variant_of(optim_input.desc)
            subject = info.name + (f".{variant}" if variant else "")
            unique, n = subject, 2
            while unique in found:
                unique, n = f"{subject}_{n}", n + 1
            found[unique] = (info, optim_input)
    return found


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    return ((subject, dtype_name(dtype), check) for subject in sorted(subjects()) for dtype in DTYPES
            for check in SUITE.checks)


@SUITE.declares_api
def public_api() -> dict[str, Any]:
    """The public class each optimizer input tests (harness/worker/suitelib/public_api.py)."""
    return {"mode": "eager", "subjects": {name: class_entries(f"optim.{info.optim_cls.__name__}", info.optim_cls, "optimizer")
                                         for name, (info, _) in subjects().items()}}


# --- what runs ----------------------------------------------------------------------------

def implementation(kwargs: dict[str, Any]) -> str:
    for flag in IMPLEMENTATIONS:
        if kwargs.get(flag):
            return flag
    return "for-loop" if "foreach" in kwargs or "fused" in kwargs else "single-tensor (the optimizer has no foreach)"


def upstream_variants(info) -> dict[str, Any]:
    """Which implementations upstream runs on this device type, and why the others are not run."""
    kind = suite_api.device_type()
    ran = ["for-loop" if info.supported_impls else "single-tensor"]
    not_run: dict[str, str] = {}
    if "foreach" in info.supported_impls:
        if kind in _get_foreach_kernels_supported_devices():
            ran.append("foreach")
        else:
            not_run["foreach"] = f"torch has no foreach kernels for {kind}"
    if "fused" in info.supported_impls:
        if kind in info.supports_fused_on:
            ran.append("fused")
        else:
            not_run["fused"] = f"the OptimizerInfo supports fused only on {', '.join(info.supports_fused_on)}"
    if "differentiable" in info.supported_impls:
        not_run["differentiable"] = "autograd through the step: not a device concern, left out"
    return {"implementations_for_device": ran, "implementations_not_run": not_run}


def tolerance(info, dtype: torch.dtype, kwargs: dict[str, Any]) -> tuple[float, float, str]:
    """(rtol, atol, source): what the OptimizerInfo declares for TestOptimRenewed's device-parity
    test, and for its foreach/fused-against-for-loop tests when the input uses them."""
    tests = ["test_mixed_device_dtype"]
    if kwargs.get("foreach"):
        tests.append("test_foreach_matches_forloop")
    if kwargs.get("fused"):
        tests.append("test_fused_matches_forloop")
    decorators = info_decorators.decorations(info, dtype, "TestOptimRenewed", tests, (None, "cpu"))
    return info_decorators.tolerance(decorators, dtype, "OptimizerInfo")


# --- the problem each optimizer solves ------------------------------------------------------

class Problem:
    """Parameters made on the CPU (seeded) and a loss over them: a weighted quadratic for dense
    gradients (2-D parameters only for Muon, which takes nothing else), an embedding lookup with
    sparse gradients for optimizers that take only those (SparseAdam)."""

    def __init__(self, info, dtype: torch.dtype, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.sparse = info.only_supports_sparse_grads
        if self.sparse:
            shapes = [(6, 3)]
            self.indices = torch.tensor([0, 2, 2, 5])
        elif info.name == "Muon":
            shapes = [(5, 4), (4, 3)]
        else:
            shapes = [(5, 4), (5,)]
        self.params = [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]
        self.centres = [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]
        self.weights = [(torch.rand(s, generator=g, dtype=torch.float64) + 0.5).to(dtype) for s in shapes]

    def parameters(self, device: str | None) -> list[torch.Tensor]:
        params = [p.clone().requires_grad_() for p in self.params]
        return params if device is None else to_device(params, device)

    def loss(self, params: list[torch.Tensor]) -> torch.Tensor:
        device = params[0].device
        centres, weights = (to_device(t, str(device)) if device.type != "cpu" else t
                            for t in (self.centres, self.weights))
        if self.sparse:
            indices = self.indices.to(device)
            rows = torch.nn.functional.embedding(indices, params[0], sparse=True)
            return (weights[0][indices] * (rows - centres[0][indices]) ** 2).sum()
        return sum((w * (p - c) ** 2).sum() for p, w, c in zip(params, weights, centres))


class Side:
    """One side's optimizer (the CPU's or the device's): its parameters, the optimizer, the
    schedulers, and the losses it saw."""

    def __init__(self, info, kwargs: dict[str, Any], problem: Problem, params: list[torch.Tensor],
                 schedulers: list[Callable] = ()) -> None:
        self.problem, self.params = problem, params
        self.optimizer = info.optim_cls(params, **copy.deepcopy(kwargs))
        self.schedulers = [make(self.optimizer) for make in schedulers]

    def step(self) -> None:
        def closure():
            self.optimizer.zero_grad()
            # The harness's loss and its gradients (the problem the optimizer is given): the case's
            # ops are the optimizer's, which reads them.
            with uncounted():
                loss = self.problem.loss(self.params)
                loss.backward()
            return loss

        loss = self.optimizer.step(closure)
        for scheduler in self.schedulers:
            if isinstance(scheduler, ReduceLROnPlateau):
                scheduler.step(loss)
            else:
                scheduler.step()

    def lrs(self) -> list[Any]:
        return [group["lr"] for group in self.optimizer.param_groups]


# --- running --------------------------------------------------------------------------------

def _numbers_as_tensors(tree: Any) -> Any:
    """Python floats in optimizer state (LBFGS's prev_loss) as float64 tensors, so they are
    compared with the tolerance, not for exact equality."""
    return pytree.tree_map(lambda v: torch.tensor(v, dtype=torch.float64) if isinstance(v, float) else v, tree)


def _without_implementation(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in group.items() if k not in IMPLEMENTATIONS} for group in groups]


@SUITE.makes_cases
class Case(Sides):
    """One case being run: its optimizer input, dtype, tolerance and context, made from its id (the
    suite's case type); the KeyError of suite_api.unknown() for an optimizer input or dtype the
    suite does not have."""

    quiet = True  # optimizers and schedulers warn about their arguments; the log is not the place

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        _, subject, dtype_str, _ = case_id
        if subject not in subjects() or dtype_str not in {dtype_name(d) for d in DTYPES}:
            raise suite_api.unknown(case_id, "such optimizer input or dtype")
        info, optim_input = subjects()[subject]
        self.id, self.dtype = case_id, getattr(torch, dtype_str)
        rtol, atol, source = tolerance(info, self.dtype, optim_input.kwargs)
        super().__init__(ctx, rtol, atol)
        self.info, self.optim_input = info, optim_input
        self.kwargs = self.optim_input.kwargs
        self.evidence: dict[str, Any] = {
            "rtol": self.rtol, "atol": self.atol, "tolerance_source": source,
            "optimizer_input": self.optim_input.desc, "kwargs": repr(self.kwargs)[:300],
            "implementation": implementation(self.kwargs), **upstream_variants(self.info), "steps": STEPS}
        self.referenced = True  # false once the CPU could not run the input (cpu())

    def cpu(self, run: Callable[..., Any], *args: Any) -> Any:
        """Sides.cpu(); a CPU that cannot run the optimizer input ends the case: an `error` of the
        harness (suite_api.no_reference), with where the case was."""
        try:
            return super().cpu(run, *args)
        except NoReference as none:
            self.referenced = False
            raise Verdict(*suite_api.no_reference(dict(self.where), "optimizer input", str(none))) from none

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        self.evidence.update(verdict.evidence)
        if self.referenced:
            self.evidence.setdefault("max_abs_error", self.max_abs)
            self.evidence.setdefault("max_rel_error", self.max_rel)
        return verdict.outcome, self.evidence

    def conclude(self) -> tuple[str, dict[str, Any]]:
        self.evidence.update({"max_abs_error": self.max_abs, "max_rel_error": self.max_rel})
        return Outcome.PASS, self.evidence

    def compare(self, actual: Any, expected: Any, where: dict[str, Any] | None = None, *,
                values: bool = True) -> None:
        super().compare(_numbers_as_tensors(actual), _numbers_as_tensors(expected), where, values=values)

    def on_device(self, state: dict[Any, Any], what: str) -> None:
        """Every non-scalar tensor of an optimizer's state must live on the device (scalars such
        as `step` may stay on the CPU, as PyTorch keeps them there unless capturable or fused)."""
        kind = suite_api.device_type()
        misplaced = sorted({f"{path}" for path, t in pytree.tree_flatten_with_path(state)[0]
                            if isinstance(t, torch.Tensor) and t.dim() > 0 and t.device.type != kind})
        if misplaced:
            raise Verdict(Outcome.FAIL, {**self.where, "compared": f"{what}: placement",
                                         "message": f"{what}: state tensors not on {kind}: "
                                                    f"{', '.join(misplaced)[:500]}"})

    def sides(self, schedulers=()) -> tuple[Side, Side]:
        problem = Problem(self.info, self.dtype, self.ctx.seed)
        cpu = self.cpu(lambda: Side(self.info, self.kwargs, problem, problem.parameters(None), schedulers))
        dev = self.device(lambda: Side(self.info, self.kwargs, problem, problem.parameters(self.ctx.device),
                                       schedulers), where={"stage": "construct"})
        return cpu, dev

    def run_steps(self, cpu: Side, dev: Side, with_lrs: bool) -> None:
        for step in range(1, STEPS + 1):
            self.where["step"] = step
            self.cpu(cpu.step)
            self.device(dev.step, where={"stage": "step"})
            self.compare_named(f"parameters after step {step}", dev.params, cpu.params)
            if with_lrs:
                self.compare_named(f"learning rates after step {step}", dev.lrs(), cpu.lrs())
        self.where.pop("step", None)


# --- the checks -----------------------------------------------------------------------------

@suite_api.check("step", f"parameters after each of {STEPS} steps, on the device against the CPU")
def check_step(case: Case) -> None:
    case.run_steps(*case.sides(), with_lrs=False)


@suite_api.check("lr_scheduler", f"{STEPS} steps with the OptimizerInfo's learning-rate schedulers: parameters "
                                 f"and learning rates")
def check_lr_scheduler(case: Case) -> None:
    names = []
    for index, schedulers in enumerate(case.info.scheduler_inputs):
        case.where = {"schedulers_index": index}
        cpu, dev = case.sides(schedulers)
        names.append([type(s).__name__ for s in cpu.schedulers])
        case.where["schedulers"] = names[-1]
        case.run_steps(cpu, dev, with_lrs=True)
    case.where = {}
    case.evidence["schedulers"] = names


@suite_api.check("state_dict", f"state_dict() after {STEPS} steps (state and param groups), state tensors on "
                               f"the device")
def check_state_dict(case: Case) -> None:
    cpu, dev = case.sides()
    case.run_steps(cpu, dev, with_lrs=False)
    expected = case.cpu(cpu.optimizer.state_dict)
    actual = case.device(dev.optimizer.state_dict, where={"stage": "state_dict"})
    case.on_device(actual["state"], "state_dict()")
    case.compare_named("state_dict() state", actual["state"], expected["state"])
    case.compare_named("state_dict() param_groups", _without_implementation(actual["param_groups"]),
                       _without_implementation(expected["param_groups"]))
    case.evidence["state_keys"] = sorted({str(k) for s in expected["state"].values() for k in s})


@suite_api.check("load_state_dict", "a CPU state dict loaded into a device optimizer: state moved to the device, "
                                    "the next step matches the CPU's")
def check_load_state_dict(case: Case) -> None:
    cpu, _ = case.sides()
    for step in range(1, STEPS + 1):
        case.cpu(cpu.step)
    saved = case.cpu(lambda: copy.deepcopy(cpu.optimizer.state_dict()))
    params = [to_device(p.detach(), case.ctx.device).requires_grad_() for p in cpu.params]
    dev = case.device(lambda: Side(case.info, case.kwargs, cpu.problem, params), where={"stage": "construct"})
    case.device(lambda: dev.optimizer.load_state_dict(copy.deepcopy(saved)), where={"stage": "load_state_dict"})
    case.on_device(dev.optimizer.state, "the loaded state")
    case.where["step"] = STEPS + 1
    case.cpu(cpu.step)
    case.device(dev.step, where={"stage": "step"})
    case.compare_named(f"parameters after step {STEPS + 1}", dev.params, cpu.params)
    actual = case.device(dev.optimizer.state_dict, where={"stage": "state_dict"})
    case.compare_named(f"state_dict() state after step {STEPS + 1}", actual["state"],
                       cpu.optimizer.state_dict()["state"])
