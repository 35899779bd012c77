"""The `hf` suite: every causal-LM architecture of the installed transformers, built tiny from its
config with random weights (nothing is downloaded), run on the device against a CPU copy.

Case ids: hf/<architecture class>/<dtype>/<check>, dtypes float32 and bfloat16, checks:
  forward        logits on the device against the CPU's, per-dtype tolerances;
  generate       greedy decoding of NEW_TOKENS tokens gives the CPU's tokens;
  backward       the loss and the gradients of a few named parameters match;
  static_shapes  a second forward at the same shapes needs no new executable; a new sequence length
                 may, and the count (compiled or loaded from the disk cache) is recorded (needs the
                 backend's compile_cache_stats()).
  train_step     training steps as users run them (suitelib/training.py): at float32 autocast to the backend's
                 lower precision, at float16 autocast with a GradScaler; backward, clipping, AdamW
                 (foreach, and fused where the backend has the kernel), the step judged exactly
                 against the CPU's replay of it from the device's gradients.
  compiled_forward  the model compiled with torch.compile(backend=<the backend's Dynamo backend>, dynamic=False), logits
                 against the CPU's eager ones; the graphs compiled, Dynamo's graph breaks with
                 their reasons, compile seconds and the backend's compile_stats() are recorded.
Every case (ModelCase: the model built and moved when the case is made, each check's `run(case)`
comparing its two copies) records the parameter count, wall time including compilation, peak
device memory and the aten op an error names; the worker adds the ops that ran natively and
through the fallback. An architecture that cannot be built is an `error` at stage `build`, never
dropped.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Iterable

import torch

import comparison
import backend_contract
import compilation
from comparison import Mismatch, to_device
from dispatch_capture import uncounted
from evidence import exception_evidence
from sides import Stage, Verdict, both
import suite_api
import vocabulary
from vocabulary import Outcome, Where
from suitelib import training
from suitelib.tiny_models import (SEQ, SEQ2, build, causal_lm_architectures, inputs, label_layouts,
                                  overrides)

from .tables import most_used

SUITE = suite_api.Suite(
    __name__, noun="architecture", nouns="causal-LM architectures",
    native_phrase="pass forward, generate and backward natively",
    headlines=lambda: [{"name": "most_used", "title": "most-used", "subjects": most_used()}])
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
NEW_TOKENS = 4
# (rtol, atol) per dtype, for logits and for gradients.
TOLERANCES = comparison.MODEL_TOLERANCES


# train_step's dtypes: float32 (autocast to the backend's lower precision) and float16 (autocast to
# float16 with a GradScaler); the model's own weights are float32 in both
TRAIN_DTYPES = ("float32", "float16")


def _model_dtype(dtype: str) -> bool:
    return dtype in DTYPES


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    overrides(), label_layouts(), most_used()  # a bad entry stops the listing, naming it
    return ((arch, dtype, check) for arch in causal_lm_architectures() for dtype in (*DTYPES, "float16")
            for check in SUITE.checks_for(dtype))


@SUITE.makes_cases
class ModelCase(suite_api.Case):
    """A case of an architecture at a dtype: the model built tiny on the CPU (`cpu`) and copied to
    the device (`dev`) when the case is made, timed from before the build, the device's peak memory
    counted from there. Its own failures are charged where they belong: a build or a CPU reference
    that raises is the harness's (the architecture, not the backend), a build that needs a package
    this environment lacks the suite's skip; a failing backward names the ties the move broke."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        if case_id.subject not in causal_lm_architectures() or case_id.check not in SUITE.checks_for(case_id.dtype):
            raise suite_api.unknown(case_id, "such architecture or dtype")
        super().__init__(case_id, ctx)
        self.dtype = case_id.dtype
        self.start = time.perf_counter()
        self.module = device_module(ctx.device)
        if self.module is not None and hasattr(self.module, "reset_peak_memory_stats"):
            self.module.reset_peak_memory_stats()
        self.ties: list[str] = []  # the ties the move broke
        try:
            # a train step's weights are float32; its dtype is what autocast computes in
            self.cpu, self.evidence["parameters"] = build(case_id.subject, DTYPES.get(self.dtype, torch.float32),
                                                          ctx.seed)
        except Exception as exc:
            if isinstance(exc, ImportError):
                # the architecture needs a package this environment lacks (Gemma 3n's timm vision tower):
                # not run here, and said so, as a test that skips itself for a missing requirement
                errored = exception_evidence(exc)
                raise suite_api.Skip(f"needs a package this environment lacks: {errored.pop('message', '')}",
                                     **errored, stage=vocabulary.Stage.BUILD) from exc
            raise self._ended(vocabulary.Stage.BUILD, exc) from exc
        try:
            self.dev, untied_by_plain_to, self.ties = move(self.cpu, ctx.device)
        except Exception as exc:
            raise self._ended("move", exc) from exc
        if untied_by_plain_to:
            self.evidence["weight_ties_plain_to_would_break"] = untied_by_plain_to
        if self.ties:
            self.evidence["weight_ties_broken_by_move"] = self.ties

    def _ended(self, stage: str, exc: Exception) -> Verdict:
        """The case ended while it was made: an `error` at that stage, as failed() concludes it."""
        return Verdict(*self.failed(Verdict(Outcome.ERROR, {**exception_evidence(exc), "stage": stage})))

    def compare(self, name: str, actual: torch.Tensor, expected: torch.Tensor) -> bool:
        """Compares at the dtype's tolerances; the largest errors of the case's comparisons (logits,
        or the loss and gradients) are the case's evidence, and the first mismatch its message."""
        rtol, atol = TOLERANCES[self.dtype]
        try:
            abs_err, rel_err = comparison.compare(actual, expected, rtol, atol)
            mismatch = None
        except Mismatch as exc:
            abs_err, rel_err, mismatch = exc.max_abs, exc.max_rel, exc
        self.evidence["max_abs_error"] = max(self.evidence.get("max_abs_error", 0.0), abs_err)
        self.evidence["max_rel_error"] = max(self.evidence.get("max_rel_error", 0.0), rel_err)
        self.evidence.update(rtol=rtol, atol=atol)
        if mismatch is not None:
            self.evidence["message"] = f"{name}: {str(mismatch)[:1500]}"
            return False
        return True

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        self.evidence.update(verdict.evidence)
        if verdict.outcome == Outcome.ERROR and verdict.evidence.get("stage") in (vocabulary.Stage.BUILD,
                                                                                  "cpu_reference"):
            self.evidence["where"] = Where.HARNESS  # the architecture itself, not the backend
            self.evidence.pop("failing_op", None)
        if verdict.outcome == Outcome.FAIL and self.ties and self.id.check == "backward":
            self.evidence["message"] = (f"model.to('{self.ctx.device}') untied {'; '.join(self.ties)}, so their "
                                        f"gradients are no longer summed: {self.evidence.get('message', '')}")
        self._measured()
        return verdict.outcome, self.evidence

    def conclude(self) -> tuple[str, dict[str, Any]]:
        self._measured()
        return super().conclude()

    def _measured(self) -> None:
        self.evidence["seconds_with_compile"] = time.perf_counter() - self.start
        if self.module is not None and hasattr(self.module, "max_memory_allocated"):
            self.evidence["peak_device_memory"] = int(self.module.max_memory_allocated())


def failed_unless(matched: bool) -> None:
    """A `fail` when a comparison did not match (its message is the case's evidence already)."""
    if not matched:
        raise Verdict(Outcome.FAIL, {})


@suite_api.check("forward", "logits on the device against the CPU's", applies=_model_dtype)
def check_forward(case: ModelCase) -> None:
    batch = inputs(case.ctx.seed)
    with torch.no_grad():
        expected, actual = both(lambda: case.cpu(**batch).logits,
                                lambda: case.dev(**to_device(batch, case.ctx.device)).logits)
    failed_unless(case.compare("logits", actual, expected))


@suite_api.check("generate", f"greedy decoding of {NEW_TOKENS} tokens gives the CPU's tokens", applies=_model_dtype)
def check_generate(case: ModelCase) -> None:
    cpu, dev, ctx, evidence = case.cpu, case.dev, case.ctx, case.evidence
    batch = inputs(ctx.seed)
    # num_return_sequences is transformers' default, spelled out for generate() overrides that
    # skip filling in the defaults (MusicGen's)
    kwargs = {"max_new_tokens": NEW_TOKENS, "min_new_tokens": NEW_TOKENS, "do_sample": False,
              "num_return_sequences": 1}
    with torch.no_grad():
        expected, actual = both(lambda: cpu.generate(**batch, **kwargs),
                                lambda: dev.generate(**to_device(batch, ctx.device), **kwargs))
    # the new tokens end the last axis: (batch, seq), or (batch, codebooks, seq) for MusicGen
    evidence["cpu_tokens"] = expected[..., -NEW_TOKENS:].tolist()
    with uncounted():  # the device's tokens copied back by the harness
        evidence["device_tokens"] = actual[..., -NEW_TOKENS:].cpu().tolist()
    if evidence["cpu_tokens"] != evidence["device_tokens"]:
        raise Verdict(Outcome.FAIL, {"message": f"greedy tokens differ: CPU {evidence['cpu_tokens']}, "
                                                f"device {evidence['device_tokens']}"})


def named_parameters_to_check(model: torch.nn.Module) -> list[str]:
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    picks = {names[0], names[len(names) // 3], names[2 * len(names) // 3], names[-1]} if names else set()
    return sorted(picks)


@uncounted()  # the harness's view of the input ids (on the device for the device's model): no op of the case's
def labels_for(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """labels=input_ids, in the layout the model's loss reads (harness/worker/suitelib/tiny_models.json "labels")."""
    if label_layouts().get(type(model).__name__) == "codebooks_last":
        return ids.reshape(-1, model.config.num_codebooks, ids.shape[-1]).transpose(1, 2)
    return ids


@suite_api.check("backward", "the loss and the gradients of a few named parameters match", applies=_model_dtype)
def check_backward(case: ModelCase) -> None:
    cpu, dev, ctx, evidence = case.cpu, case.dev, case.ctx, case.evidence
    batch = inputs(ctx.seed)

    def loss(model, data):  # as training runs it: no cache (RWKV updates its state in place)
        out = model(**data, labels=labels_for(model, data["input_ids"]), use_cache=False)
        out.loss.backward()
        return out.loss

    expected, actual = both(lambda: loss(cpu, batch), lambda: loss(dev, to_device(batch, ctx.device)))
    ok = case.compare("loss", actual, expected)
    grads_cpu, grads_dev = dict(cpu.named_parameters()), dict(dev.named_parameters())
    evidence["gradients_checked"] = names = named_parameters_to_check(cpu)
    for name in names:
        g_cpu, g_dev = grads_cpu[name].grad, grads_dev[name].grad
        if (g_cpu is None) != (g_dev is None):
            raise Verdict(Outcome.FAIL, {"message": f"gradient of {name}: {'no' if g_dev is None else 'a'} "
                                                    f"gradient on the device"})
        if g_cpu is not None and ok:
            ok = case.compare(f"gradient of {name}", g_dev, g_cpu)
    failed_unless(ok)


@suite_api.check("static_shapes", "a second forward at the same shapes compiles nothing new", native=False,
                 applies=_model_dtype, requires=lambda ctx: backend_contract.current().why_absent(
                     "compile_cache_stats", "compile-cache counters"))
def check_static_shapes(case: ModelCase) -> None:
    cpu, dev, ctx = case.cpu, case.dev, case.ctx

    def compiles() -> int:  # executables not in memory: compiled now, or loaded from the disk cache
        stats = ctx.compile_cache()
        return int(stats.get("compiles", 0)) + int(stats.get("disk_hits", 0))

    batch, longer = to_device(inputs(ctx.seed), ctx.device), to_device(inputs(ctx.seed, SEQ2), ctx.device)
    with torch.no_grad():
        both(lambda: cpu(**inputs(ctx.seed)), lambda: dev(**batch))  # also tells a CPU failure apart
        try:
            first = compiles()
            dev(**batch)
            second = compiles()
            dev(**longer)
            third = compiles()
        except Exception as exc:
            raise Stage("device", exc) from exc
    case.evidence.update(compiles_same_shapes=second - first, compiles_new_sequence_length=third - second,
                         sequence_lengths=[SEQ, SEQ2])
    if second != first:
        raise Verdict(Outcome.FAIL, {"message": f"a second forward at the same shapes compiled {second - first} new "
                                                f"executable(s)"})


@suite_api.check("compiled_forward", "the model compiled (torch.compile, the backend's Dynamo backend, static "
                 "shapes): logits against the CPU's eager ones; graphs, graph breaks and compile time recorded",
                 native=False, applies=_model_dtype, requires=lambda ctx: compilation.missing_backend())
def check_compiled_forward(case: ModelCase) -> None:
    cpu, dev, ctx = case.cpu, case.dev, case.ctx
    batch = inputs(ctx.seed)
    ctx.unobservable(compilation.UNSEEN)
    with torch.no_grad():
        try:
            expected = cpu(**batch).logits
        except Exception as exc:
            raise Stage("cpu_reference", exc) from exc
        run = compilation.run_compiled(dev, lambda compiled: compiled(**to_device(batch, ctx.device)).logits,
                                       ctx.backend)
    case.evidence.update({**(run.failure or {}), **run.cost, "compile_seconds": round(run.cost["compile_seconds"], 3)})
    if run.failure is not None:
        raise Verdict(Outcome.ERROR, {})
    failed_unless(case.compare("compiled logits", run.output, expected))


def tie_groups(model: torch.nn.Module) -> list[list[str]]:
    """Names of the parameters the model shares (tied weights), one list per shared parameter."""
    groups: dict[int, list[str]] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(name)
    return [names for names in groups.values() if len(names) > 1]


def move(cpu: torch.nn.Module, device: str) -> tuple[torch.nn.Module, list[str], list[str]]:
    """A copy of the model on the device, with the ties plain `.to()` would break and those still broken.

    Module.to keeps a tie only by swapping tensor data in place, which PyTorch allows between
    the CPU and its built-in devices but not for a PrivateUse1 device: there `.to()` makes a tied
    embedding and output layer two parameters whose gradients are no longer summed. PyTorch's
    answer for such devices is to swap whole tensors (`torch.__future__`'s
    swap_module_params_on_conversion), which keeps each Parameter object and so every tie; the
    suite moves models that way, as a user of the device would be told to, and records the ties
    a plain `.to()` would have broken."""
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        with uncounted():  # the harness's copies of the weights: no op of the case's
            dev = copy.deepcopy(cpu).to(device)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(previous)
    cpu_params = dict(cpu.named_parameters(remove_duplicate=False))
    on_device = dict(dev.named_parameters(remove_duplicate=False))
    untied_by_plain_to, broken = [], []
    for names in tie_groups(cpu):
        tie = " = ".join(names)
        if not torch._has_compatible_shallow_copy_type(cpu_params[names[0]], on_device[names[0]]):
            untied_by_plain_to.append(tie)
        if len({id(on_device[n]) for n in names}) > 1:
            broken.append(tie)
    return dev, untied_by_plain_to, broken


@suite_api.check("train_step", "training steps as users run them: autocast to the backend's lower precision (float16 "
                 "with a GradScaler whose first step overflows), backward, gradient clipping, AdamW (foreach, and fused "
                 "where the backend has the kernel); the loss and gradients against the CPU's, the step's unscale, "
                 "clip, optimizer step and scale update against the CPU's replay of it from the device's gradients",
                 applies=lambda dtype: dtype in TRAIN_DTYPES, native=False)
def check_train_step(case: ModelCase) -> None:
    batch = inputs(case.ctx.seed)
    on_device = to_device(batch, case.ctx.device)

    def loss_of(data):  # as training runs it: no cache
        return lambda model: model(**data, labels=labels_for(model, data["input_ids"]), use_cache=False).loss

    failed_unless(training.run(case.cpu, case.dev, case.dtype, case.ctx.device, case.evidence, loss_of(batch),
                               loss_of(on_device), named_parameters_to_check(case.cpu), both))


def device_module(device: str):
    return getattr(torch, device.split(":")[0], None)

