"""The module suite: every ModuleInfo of the installed torch's module_db, at the dtypes upstream's
device-type tests pick for the CPU (ModuleInfo.supported_dtypes("cpu")), with the module inputs
PyTorch's own tests use (module_info.module_inputs_func), built on the CPU, copied to the device
and compared with the CPU, as upstream's TestModule.test_cpu_gpu_parity does.

Case ids: modules/<subject>/<dtype>/<check>, subject = the ModuleInfo's name (nn.BatchNorm2d).
Checks, each over every module input, in training mode and, where the ModuleInfo says the two
differ (train_and_eval_differ), in eval mode too (upstream's training flags):
  forward        the forward's outputs
  backward       the gradients of the parameters and of the inputs that require grad, for
                 random output gradients made on the CPU (upstream's grad_output.normal_())
  noncontiguous  forward and gradients with every input made non-contiguous (same values in
                 strided storage, common_utils.noncontiguous_like), against the CPU given the
                 same non-contiguous inputs
  state          (modules with buffers) the buffers, such as running statistics, after two
                 training-mode forwards
  save_load      (one dtype per module: float32, else its first; training mode) torch.save /
                 torch.load of the module with its state_dict and views of its storage:
                 device -> cpu, device -> device, cpu -> device, each tensor's device, dtype,
                 shape, strides, storage offset, values and storage sharing kept, and the loaded
                 module's forward (save_load.py)
Each module input is built on the CPU (seeded), copied to the device (deepcopy, .to(device)), and
both copies run from the same state. Lazy modules are initialized on the CPU first.
Tolerances: the ModuleInfo's own toleranceOverride / precisionOverride decorators for
TestModule.test_cpu_gpu_parity and the check's own upstream test (test_forward,
test_non_contiguous_tensors) on any device or the CPU, else torch.testing's per-dtype defaults;
the tolerance and its source are evidence, and what "differs" means is
harness/worker/comparison.py's.
A module input the CPU itself cannot build or run has no reference and is counted, not compared;
a case where no input has one is an `error` with `where: harness`.
"""

from __future__ import annotations

import copy
import functools
import random
import warnings
from typing import Any, Callable, Iterable

import numpy
import torch
import torch.utils._pytree as pytree
from torch.testing._internal import common_utils
from torch.testing._internal.common_modules import module_db
from torch.testing._internal.common_utils import noncontiguous_like

from comparison import to_device
from dispatch_capture import uncounted
from evidence import describe_call, dtype_name
from suitelib import info_decorators
from sides import NoReference, Sides, Verdict, seed
import suite_api
from suitelib.public_api import class_entries
from vocabulary import Outcome

from . import save_load

SUITE = suite_api.Suite(__name__, noun="module", nouns="modules",
                        native_phrase="pass forward and backward natively at every dtype")
# Each check's traits: `upstream_tests`, the upstream tests whose tolerance decorators apply to it,
# in the order they apply (a later one overrides an earlier one); `needs_grad`, inputs that require
# grad; `training_only`, run in training mode alone.


MODULES = {info.name: info for info in module_db}


def _seed_inputs() -> None:
    """The RNGs as upstream's tests have them when a test starts (common_utils.SEED)."""
    torch.default_generator.manual_seed(common_utils.SEED)
    random.seed(common_utils.SEED)
    numpy.random.seed(common_utils.SEED)


def module_inputs(info, dtype: torch.dtype, *, requires_grad: bool, training: bool) -> list:
    _seed_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=requires_grad,
                                            training=training))


def _has_buffers(info) -> bool:
    """Whether any of the module's inputs builds a module with buffers (dtype does not matter)."""
    for module_input in module_inputs(info, torch.float32, requires_grad=False, training=True):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = info.module_cls(*module_input.constructor_input.args, **module_input.constructor_input.kwargs)
        except Exception:
            continue
        if next(module.buffers(), None) is not None:
            return True
    return False


@functools.cache
def _has_buffers_named(name: str) -> bool:
    return _has_buffers(MODULES[name])


def _save_load_dtype(info) -> torch.dtype:
    """The one dtype save_load runs at: serialization does not depend on it."""
    dtypes = sorted(info.supported_dtypes("cpu"), key=dtype_name)
    return torch.float32 if torch.float32 in dtypes else dtypes[0]


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    for subject, info in sorted(MODULES.items()):
        for dtype in sorted(info.supported_dtypes("cpu"), key=dtype_name):
            yield from ((subject, dtype_name(dtype), check) for check in SUITE.checks_for(info, dtype))


@SUITE.declares_api
def public_api() -> dict[str, Any]:
    """The public class each ModuleInfo tests (harness/worker/suitelib/public_api.py)."""
    return {"mode": "eager", "subjects": {name: class_entries(name, info.module_cls, "module")
                                         for name, info in MODULES.items()}}


# --- tolerances ---------------------------------------------------------------------------

def tolerance(info, dtype: torch.dtype, check: str) -> tuple[float, float, str]:
    """(rtol, atol, source) for comparing this module's device results at dtype in `check`: what the
    ModuleInfo declares for the check's upstream tests, on any device or the CPU."""
    upstream_tests = SUITE.checks[check].traits["upstream_tests"]
    decorators = info_decorators.decorations(info, dtype, "TestModule", upstream_tests, (None, "cpu"))
    return info_decorators.tolerance(decorators, dtype, "ModuleInfo")


# --- running ------------------------------------------------------------------------------

class NotApplicable(Exception):
    """The check has nothing to compare for this module input (no buffers, nothing differentiable)."""


def _describe_args(forward_input) -> str:
    return describe_call(forward_input.args, forward_input.kwargs)


def _constructor(module_input) -> str:
    c = module_input.constructor_input
    parts = [repr(a)[:40] for a in c.args] + [f"{k}={repr(v)[:40]}" for k, v in c.kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _leaves_of(forward_input) -> tuple[tuple, dict]:
    """The forward's args and kwargs with every tensor a fresh leaf of the same layout that keeps
    its requires_grad (inputs funcs may hand out views or non-leaves)."""
    def leaf(t):
        if isinstance(t, torch.Tensor):
            return t.detach().requires_grad_(t.requires_grad)
        return t
    return pytree.tree_map(leaf, (tuple(forward_input.args), dict(forward_input.kwargs)))


def _noncontiguous(inputs: tuple[tuple, dict]) -> tuple[tuple, dict]:
    def nc(t):
        if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.dim() > 0:
            return noncontiguous_like(t.detach()).requires_grad_(t.requires_grad)
        return t
    return pytree.tree_map(nc, inputs)


def _clone(inputs: tuple[tuple, dict]) -> tuple[tuple, dict]:
    """A copy of the inputs with the same layouts (a forward may write into its input: inplace=True)."""
    def clone(t):
        if isinstance(t, torch.Tensor):
            return t.detach().clone(memory_format=torch.preserve_format).requires_grad_(t.requires_grad) \
                if t.is_contiguous() else noncontiguous_like(t.detach().contiguous()).requires_grad_(t.requires_grad)
        return copy.deepcopy(t)
    return pytree.tree_map(clone, inputs)


def _differentiable(tree) -> list[tuple[str, torch.Tensor]]:
    leaves, _ = pytree.tree_flatten_with_path(tree)
    return [(pytree.keystr(path), t) for path, t in leaves
            if isinstance(t, torch.Tensor) and t.requires_grad]


class Case(Sides):
    """One case being run: its module, dtype, check, tolerance and context, what it compared so far;
    the suite's case type (from_id())."""

    quiet = True  # modules warn about their arguments; the log is not the place for it

    def __init__(self, info, dtype: torch.dtype, check: str, ctx) -> None:
        rtol, atol, source = tolerance(info, dtype, check)
        super().__init__(ctx, rtol, atol)
        self.info, self.dtype, self.check = info, dtype, check
        self.modes = [True, False] if info.train_and_eval_differ else [True]
        self.evidence: dict[str, Any] = {"rtol": self.rtol, "atol": self.atol, "tolerance_source": source,
                                         "modes": ["train" if m else "eval" for m in self.modes]}
        self.compared = self.without_reference = self.not_applicable = 0

    @classmethod
    def from_id(cls, case_id: suite_api.CaseId, ctx) -> Case:
        """The case a case id names; the KeyError of suite_api.unknown() for a ModuleInfo or dtype the
        suite does not have."""
        info, dtype = suite_api.info_and_dtype(case_id, MODULES, "ModuleInfo")
        return cls(info, dtype, case_id.check, ctx)

    def each_input(self, body: Callable[[Case, Any, tuple[tuple, dict], bool], None]) -> None:
        """`body(case, module_input, inputs, training)` for every module input of the check (inputs
        that require grad where it `needs_grad`), in each of the case's modes (training alone where
        it is `training_only`), `inputs` the forward's as fresh leaves and `where` set to the input.
        An input the CPU cannot run (NoReference) is counted without a reference, one the check has
        nothing to compare for (NotApplicable) as not applicable, any other as compared; a Verdict
        ends the case."""
        traits = SUITE.checks[self.check].traits
        needs_grad = traits.get("needs_grad", False)
        for training in [True] if traits.get("training_only") else self.modes:
            for index, module_input in enumerate(module_inputs(self.info, self.dtype, requires_grad=needs_grad,
                                                               training=training)):
                if module_input.forward_input is None:
                    continue
                _where(self, index, module_input, training)
                try:
                    body(self, module_input, _leaves_of(module_input.forward_input), training)
                except NoReference:
                    self.without_reference += 1
                    continue
                except NotApplicable as reason:
                    self.not_applicable += 1
                    self.evidence.setdefault("not_applicable", str(reason))
                    continue
                self.compared += 1

    def conclude(self) -> tuple[str, dict[str, Any]]:
        self.evidence.update({"inputs_compared": self.compared, "inputs_without_reference": self.without_reference,
                              "max_abs_error": self.max_abs, "max_rel_error": self.max_rel})
        if self.not_applicable:
            self.evidence["inputs_not_applicable"] = self.not_applicable
        if self.compared == 0:
            if self.not_applicable and not self.without_reference:
                return Outcome.PASS, self.evidence
            self.evidence.pop("not_applicable", None)
            return suite_api.no_reference(self.evidence, "module input", self.first_cpu_error)
        self.evidence.pop("not_applicable", None)
        return Outcome.PASS, self.evidence

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        self.evidence.pop("not_applicable", None)
        self.evidence.update(verdict.evidence)
        self.evidence["inputs_compared"] = self.compared
        return verdict.outcome, self.evidence


SUITE.makes_cases(Case.from_id)


def _forward(module, inputs):
    args, kwargs = inputs
    return module(*args, **kwargs)


class GradOutputs:
    """Random output gradients (upstream's grad_output.normal_()), made on the CPU from the
    case's seed for the CPU run and moved to the device for the device run: the same values."""

    def __init__(self, seed_value: int) -> None:
        self.seed = seed_value

    @uncounted()  # the harness's gradients, and their copy to the device: no op of the case's
    def __call__(self, outputs: list[torch.Tensor]) -> list[torch.Tensor]:
        g = torch.Generator().manual_seed(self.seed)
        made = [torch.randn(o.shape, generator=g, dtype=torch.float64).to(o.dtype)
                if o.is_floating_point() else torch.ones(o.shape, dtype=o.dtype) for o in outputs]
        return [m.to(o.device) for m, o in zip(made, outputs)]


def _evaluate(module, inputs, grad_outputs: GradOutputs | None, output: bool) -> list[tuple[str, Any]]:
    """The named results of one run: the forward's outputs (when `output`), then (with
    grad_outputs) the gradients of the parameters and of the inputs that require grad, None for
    what the graph does not reach. Raises NotApplicable when gradients are asked for and nothing
    is differentiable and no output is compared."""
    outputs = _forward(module, inputs)
    results: list[tuple[str, Any]] = [("output", outputs)] if output else []
    if grad_outputs is None:
        return results
    differentiable = [t for t in pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    named = [(f"parameter {n}", p) for n, p in module.named_parameters() if p.requires_grad]
    named += [(f"input {n}", t) for n, t in _differentiable(inputs)]
    if not differentiable or not named:
        if not output:
            raise NotApplicable("no differentiable output, or nothing to differentiate")
        return results
    grads = torch.autograd.grad(differentiable, [t for _, t in named], grad_outputs(differentiable),
                                allow_unused=True)
    return results + [(f"gradient of {n}", g) for (n, _), g in zip(named, grads)]


def _differs(case: Case, actual: list[tuple[str, Any]], expected: list[tuple[str, Any]]) -> Verdict | None:
    """The first difference between two runs' named results, as a Verdict, or None."""
    if [n for n, _ in actual] != [n for n, _ in expected]:
        return Verdict(Outcome.FAIL, {**case.where, "compared": "what the run produces",
                                      "message": f"the device produced {[n for n, _ in actual]}, the CPU "
                                                 f"{[n for n, _ in expected]}"})
    for (name, a), (_, e) in zip(actual, expected):
        if (a is None) != (e is None):
            return Verdict(Outcome.FAIL, {**case.where, "compared": name,
                                          "message": f"{name}: {'none' if a is None else 'a value'} on the device, "
                                                     f"{'none' if e is None else 'a value'} on the CPU"})
        if e is not None:
            try:
                case.compare_named(name, a, e)
            except Verdict as verdict:
                return verdict
    return None


def _cpu_run(case: Case, module_input, training: bool, inputs, grads: GradOutputs | None, output: bool):
    """A fresh CPU module (the same seeded state) run on `inputs`: the results and the module."""
    def run():
        module = _build_cpu(case, module_input, inputs, training)
        return _evaluate(module, _clone(inputs), grads, output), module
    try:
        return case.cpu(run)
    except NoReference as none:
        if isinstance(none.__cause__, NotApplicable):
            raise none.__cause__ from None
        raise


def _build_cpu(case: Case, module_input, inputs, training: bool) -> torch.nn.Module:
    """The module on the CPU: seeded, at the dtype, in the mode, lazy parameters initialized."""
    seed(case.ctx.seed)
    c = module_input.constructor_input
    module = case.info.module_cls(*c.args, **c.kwargs).to(case.dtype)
    module.train(training)
    if case.info.is_lazy:
        with torch.no_grad():
            args, kwargs = _clone(inputs)
            module(*args, **kwargs)
    return module


def _where(case: Case, index: int, module_input, training: bool) -> None:
    case.where = {"module_input": index, "module_input_desc": module_input.desc or "(no description)",
                  "mode": "train" if training else "eval", "constructor": _constructor(module_input),
                  "forward_input": _describe_args(module_input.forward_input)}


@suite_api.check("forward", "the forward's outputs for every module input, in training mode and (where they differ) "
                            "eval mode, on the device against the CPU",
                 upstream_tests=("test_cpu_gpu_parity", "test_forward"))
def forward(case: Case) -> None:
    case.each_input(functools.partial(_compare, grads=False, output=True, noncontiguous=False))


@suite_api.check("backward", "gradients of the parameters and of the inputs for random output gradients",
                 upstream_tests=("test_cpu_gpu_parity",), needs_grad=True)
def backward(case: Case) -> None:
    case.each_input(functools.partial(_compare, grads=True, output=False, noncontiguous=False))


@suite_api.check("noncontiguous", "forward and gradients with every input non-contiguous (same values, strided storage)",
                 native=False, upstream_tests=("test_cpu_gpu_parity", "test_non_contiguous_tensors"), needs_grad=True)
def noncontiguous(case: Case) -> None:
    case.each_input(functools.partial(_compare, grads=True, output=True, noncontiguous=True))


def _compare(case: Case, module_input, inputs, training: bool, *, grads: bool, output: bool,
             noncontiguous: bool) -> None:
    """One module input in one mode: run on both sides and compare the outputs (`output`) and the
    gradients for random output gradients (`grads`), the device given the inputs non-contiguous
    (`noncontiguous`)."""
    device = case.ctx.device
    grads = GradOutputs(case.ctx.seed) if grads else None
    expected, cpu_module = _cpu_run(case, module_input, training, inputs, grads, output)
    variant = _noncontiguous(inputs) if noncontiguous else inputs
    if variant is not inputs:
        case.where["variant"] = "noncontiguous"
        case.where["forward_input"] = _describe_args(type(module_input.forward_input)(*variant[0], **variant[1]))
    dev_module = case.device(lambda: _build_device(case, module_input, inputs, training), where={"stage": "move"})
    dev_inputs = to_device(variant, device)
    actual = case.device(lambda: _evaluate(dev_module, dev_inputs, grads, output), where={"stage": "device"})
    verdict = _differs(case, actual, expected)
    if verdict is not None and variant is not inputs:
        # The CPU's own result may depend on the layout (upstream skips such modules'
        # non-contiguous test): judge against the CPU given the same non-contiguous inputs.
        try:
            own, _ = _cpu_run(case, module_input, training, variant, grads, output)
        except (NoReference, NotApplicable):
            raise verdict from None
        measured = case.max_abs, case.max_rel  # the CPU against itself is no device error
        layout_dependent = _differs(case, own, expected) is not None
        case.max_abs, case.max_rel = measured
        if layout_dependent:
            case.evidence["cpu_depends_on_layout"] = True
            verdict = _differs(case, actual, own)
    if verdict is not None:
        raise verdict


def _build_device(case: Case, module_input, inputs, training: bool) -> torch.nn.Module:
    """The same module as the CPU's (built the same way, from the same seed), copied to the device."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = _build_cpu(case, module_input, inputs, training)
    with uncounted():  # the harness's copy of the module's state: no op of the case's
        return copy.deepcopy(cpu).to(case.ctx.device)


@suite_api.check("state", "buffers (running statistics) after two training-mode forwards", native=False,
                 applies=lambda info, dtype: _has_buffers_named(info.name), upstream_tests=("test_cpu_gpu_parity",),
                 training_only=True)
def state(case: Case) -> None:
    case.each_input(_buffers_after_training)


def _buffers_after_training(case: Case, module_input, inputs, training: bool) -> None:
    """Buffers after two training-mode forwards, on the device against the CPU."""
    def train(module, data):
        with torch.no_grad():
            for _ in range(2):
                _forward(module, data)
        return dict(module.named_buffers())

    def cpu():
        module = _build_cpu(case, module_input, inputs, True)
        if next(module.buffers(), None) is None:
            raise NotApplicable("the module built from this input has no buffers")
        return train(module, _clone(inputs))

    try:
        expected = case.cpu(cpu)
    except NoReference as none:
        if isinstance(none.__cause__, NotApplicable):
            raise none.__cause__ from None
        raise
    dev_module = case.device(lambda: _build_device(case, module_input, inputs, True), where={"stage": "move"})
    dev_inputs = to_device(inputs, case.ctx.device)
    actual = case.device(lambda: train(dev_module, dev_inputs), where={"stage": "device"})
    verdict = _differs(case, [(f"buffer {n}", actual.get(n)) for n in sorted(set(actual) | set(expected))],
                       [(f"buffer {n}", expected.get(n)) for n in sorted(set(actual) | set(expected))])
    if verdict is not None:
        raise verdict
    case.evidence["buffers_compared"] = sorted(set(case.evidence.get("buffers_compared", [])) | set(expected))


@suite_api.check("save_load", "torch.save/torch.load of the module, its state_dict and views of its storage, device to "
                              "CPU, device to device and CPU to device: device, dtype, strides, offsets, values and "
                              "storage sharing kept",
                 native=False, applies=lambda info, dtype: dtype == _save_load_dtype(info),
                 upstream_tests=("test_cpu_gpu_parity",), training_only=True)
def save_and_load(case: Case) -> None:
    case.each_input(_saved_and_loaded)


def _saved_and_loaded(case: Case, module_input, inputs, training: bool) -> None:
    """The module built from one input saved and loaded every way (save_load.run)."""
    if not save_load.first_of_its_kind(case, _constructor(module_input)):
        raise NotApplicable(f"save_load runs each distinct constructor once, at most {save_load.CONSTRUCTORS}")
    save_load.run(case, lambda: _build_cpu(case, module_input, inputs, training),
                  lambda: _build_device(case, module_input, inputs, training),
                  lambda module: _forward(module, to_device(_clone(inputs), case.ctx.device)))
