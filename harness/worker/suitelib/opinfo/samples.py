"""An OpInfo's samples as the suites run them: upstream's own, seeded as its tests seed them
(generated(), differentiable() for gradients), their tensors (tensors()) and description for
evidence (describe()), their non-contiguous twin (noncontiguous()), and their placement on the
device (on_device(): the arguments PyTorch takes on the CPU alone stay there).
"""

from __future__ import annotations

import contextlib
import random
from functools import cache
from typing import Any

import numpy
import torch
import torch.utils._pytree as pytree
from torch.testing._internal import common_utils
from torch.testing._internal.common_utils import noncontiguous_like
from torch.testing._internal.opinfo.core import SampleInput

from comparison import to_device
from dispatch_capture import uncounted
from evidence import describe_call
from suitelib import reviewed

from . import facts, sample_variants

def generated(op, dtype: torch.dtype, *, reference: bool, requires_grad: bool = False,
              limit: int | None = None) -> list:
    """op.reference_inputs("cpu", ...) (which are op.sample_inputs when the OpInfo has no
    reference_inputs_func) or op.sample_inputs("cpu", ...): the same samples, seeded the same way
    (the RNGs set to common_utils.SEED before each one, as TrackedInputIter does outside a test),
    without TrackedInputIter's cost per call (it inspects the whole stack to find a test) and per
    sample (torch.manual_seed also queues lazy seeds for CUDA, MPS and XPU).
    Reference inputs that upstream makes as `sample.noncontiguous()` of another sample (the
    elementwise ops' generators yield every sample twice, contiguous then not) are left out: the
    suite runs every sample non-contiguously itself, against the CPU result it already has.
    `limit`: only the first that many (the rest are not generated)."""
    make = op.reference_inputs_func if reference and op.reference_inputs_func is not None else op.sample_inputs_func
    made, twins = [], set()
    with _twins_marked(twins), uncounted():  # CPU tensors made by the harness: no op of the case's
        generator = iter(make(op, "cpu", dtype, requires_grad))
        while limit is None or len(made) < limit:
            value = common_utils.SEED
            torch.default_generator.manual_seed(value)
            random.seed(value)
            numpy.random.seed(value)
            try:
                sample = next(generator)
            except StopIteration:
                break
            if id(sample) not in twins:
                made.append(sample)
            twins.clear()
    return made


def differentiable(op, dtype: torch.dtype, *, reference: bool, limit: int | None = None) -> list:
    """generated() requiring grad, every tensor made the leaf it is on the device (to_device), with
    the same layout: upstream generates them under no_grad, where a view (a transposed or expanded
    input) requires grad without being a leaf the graph reaches. What the gradient checks, the
    compile suite's backward and the fuzz suite's backward examples differentiate."""
    made = generated(op, dtype, reference=reference, requires_grad=True, limit=limit)
    with uncounted():
        return [s.transform(lambda t: t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t)
                for s in made]


@contextlib.contextmanager
def _twins_marked(twins: set[int]):
    """While generating, SampleInput.noncontiguous() notes the id of what it returns in `twins`
    (SampleInput has __slots__: it cannot carry a mark of its own)."""
    original = SampleInput.noncontiguous

    def noncontiguous(self):
        twin = original(self)
        twins.add(id(twin))
        return twin

    SampleInput.noncontiguous = noncontiguous
    try:
        yield
    finally:
        SampleInput.noncontiguous = original


def describe(sample) -> str:
    """A sample's inputs as evidence names them (evidence.describe_call)."""
    return describe_call([sample.input, *sample.args], sample.kwargs)


def tensors(sample) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves([sample.input, sample.args, sample.kwargs]) if isinstance(t, torch.Tensor)]


def names_device(sample, device_type: str) -> bool:
    """Whether an argument names a device of `device_type`: asks for a result there (`device="cpu"`,
    `to("cpu")`, torch.device("neuron:0"))."""
    return any((isinstance(v, str) and v.split(":")[0] == device_type)
               or (isinstance(v, torch.device) and v.type == device_type)
               for v in pytree.tree_leaves([sample.args, sample.kwargs]))


@uncounted()  # the harness's CPU work, as all making of inputs
def noncontiguous(sample) -> SampleInput | None:
    """Upstream's SampleInput.noncontiguous() (the same values in strided storage; sparse tensors
    as they are), or None when it changes nothing: no strided tensor, or every one already
    non-contiguous."""
    variant = sample.transform(
        lambda t: noncontiguous_like(t) if isinstance(t, torch.Tensor) and t.layout == torch.strided else t)
    if all(a is b for a, b in zip(tensors(sample), tensors(variant))):
        return None
    return variant


def on_device(sample, device: str, op=None):
    """The sample with its tensors moved to `device` (comparison.to_device: layouts kept), but the
    arguments PyTorch takes on the CPU alone (the reviewed fact cpu_arguments of `op`,
    facts.json: upstream's samples make them there for every device) kept there, and a `device=`
    argument naming the CPU (factory functions and *_like ops, generated for "cpu") naming
    `device`, as upstream's samples generated for the device under test would."""
    moved = to_device(sample, device)
    if not isinstance(moved, SampleInput):
        return moved
    if "device" in moved.kwargs and torch.device(moved.kwargs["device"]).type == "cpu":
        moved = sample_variants.rebuilt(moved, kwargs={**moved.kwargs, "device": device})
    kept = facts.about(op, "cpu_arguments") if op is not None else None
    if positions := kept["positions"] if kept else ():
        moved = sample_variants.rebuilt(moved, args=tuple(
            sample.args[i] if i in positions and isinstance(sample.args[i], torch.Tensor) else a
            for i, a in enumerate(moved.args)))
    return moved


# --- the reviewed facts that decide which samples are made, and where --------------------------

def at_one_dtype(op) -> list:
    """The OpInfo's samples at float32 where it has it on the CPU (else at its first dtype there):
    what a reviewed fact's check looks at to know the fact still changes something."""
    dtypes = sorted(op.supported_dtypes("cpu"), key=lambda d: (d != torch.float32, str(d)))
    return generated(op, dtypes[0], reference=False) if dtypes else []


@reviewed.document
@cache
def cpu_arguments_facts() -> dict[str, dict[str, Any]]:
    """facts.json's cpu_arguments facts, each position one where a sample of the OpInfo holds a
    tensor (on_device keeps it on the CPU)."""
    def holds_tensors(op, fact) -> bool:
        made = at_one_dtype(op)
        return all(any(p < len(s.args) and isinstance(s.args[p], torch.Tensor) for s in made)
                   for p in fact["positions"])

    return facts.applying("cpu_arguments", holds_tensors, "no sample of it holds a tensor at one of its positions")


# The variants of sample_variants whose CPU result a fact can say is undefined: name -> whether it
# makes one of the sample (the ops suite's edge and invalid variants; the fuzz suite checks its own).
MADE_HERE: dict[str, Any] = {
    "zero_size": lambda op, s: any(n == "zero_size" for n, _ in sample_variants.zero_size(s)),
    "zero_size_last": lambda op, s: any(n == "zero_size_last" for n, _ in sample_variants.zero_size(s)),
    "zero_dim": lambda op, s: any(True for _ in sample_variants.zero_dim(s)),
    **{kind: (lambda op, s, make=make: any(True for _ in make(op, s)))
       for kind, make in sample_variants.INVALID_KINDS.items()},
}


@reviewed.document
@cache
def undefined_on_cpu_facts() -> dict[str, dict[str, Any]]:
    """facts.json's undefined_on_cpu facts naming variants made here: each such variant one that a
    sample of the OpInfo makes (a variant no sample makes needs no fact)."""
    def made(op, fact) -> bool:
        made = at_one_dtype(op)
        return all(any(MADE_HERE[v](op, s) for s in made) for v in fact["variants"] if v in MADE_HERE)

    return facts.applying("undefined_on_cpu", made, "no sample of it makes one of its variants",
                          concerns=lambda fact: bool(set(fact["variants"]) & set(MADE_HERE)))
