"""The chains suite: sequences of ops as models run them, eagerly on the device against the CPU.

A device that fuses consecutive eager ops (TorchNeuron's eager fusion, the bundled backend's
chains) runs code no one-op case reaches: a defect of a fused executable (wrong numerics, an
intermediate read from the wrong buffer, an in-place write or a view the fused code ignores, lost
ordering between two streams) is invisible to the ops suite, whose every check calls one op and
reads its result. Each case draws chains with Hypothesis: elementwise and view ops over two
inputs, each op's operands any value made before it. Each chain runs on the device in one go,
waited on only at its end (what the device may fuse), and on the CPU; every value the chain made
is compared as it is at the chain's end (an in-place write reaches the values it aliases), and
each value read back to the host mid-chain as it was read then. A failing chain is shrunk to the
shortest that still fails.

Case ids: chains/elementwise/<dtype>/<variant>, dtype float32 or bfloat16; the variants (checks):
  plain         unary, binary and view ops
  inplace       with in-place ops writing earlier values (one at least, an op reading the written
                value right after it)
  readback      with values read back to the host mid-chain (one at least, then an op on it)
  view_written  with a view of an earlier value written in place afterwards (one at least, then
                an op reading the value written through the view)
  streams       split in two: the second part on another stream, waiting on an event recorded
                after the first (skip where the device module has no Stream and Event)
  model_shapes  plain chains at activation shapes of the hf suite's tiny Llama (attention scores
                batch x heads x seq x seq, MLP activations tokens x intermediate)
And chains as models run them: chains/hf.<architecture>/float32/windows replays windows of the aten
ops one training step of the architecture's tiny model runs (traces.py: forward with labels, the
loss's backward, attention as its math), each window alone from copies of what it read, on the
device in one go against the CPU; every value the window makes or writes is compared, but for
buffers it allocates and leaves for a later op to fill (the CPU's run again, new memory poisoned,
tells them: `values_undetermined`); a failing window is narrowed to the fewest ops that still fail
(`window`: each op with its operands' shapes, `phase` forward or backward). A window holding a
random op is not replayed. Architectures: ARCHITECTURES below.
A chain whose CPU run raises (an in-place write into an expanded view), or whose values depend on
the order a kernel visits elements in (an in-place op reading another view of what it writes), is
not drawn.
Options: `max_examples` (default 50; the nightly's 400) chains a case draws, `length` (default 8)
steps a chain has at most, `window` (default 8) ops a window holds, `max_windows` (default 48; the
nightly's 1000) windows replayed per architecture. Deterministic under `--seed` (with the case id): no example database.
Judged at the dtype's tolerance (float32: 1e-5; bfloat16: rtol 1.6e-2, atol 1e-2); at bfloat16 a
value unlike the CPU's is judged three ways against the chain run in float64
(comparison.three_way), so a device that keeps a fused chain's intermediates at a higher
precision is not wrong for it.
Evidence: `chains` (seed, examples run, the steps drawn by kind, and `device_fusion`: the chains
and ops the device says it fused meanwhile, where its execution_stats() counts them); on a failure `chain` (the shrunk
chain, one step an item: `v3 = mul(v1, v2)`), `shape`, and the message naming the first value
that differs (`v3`, or `read v2` for a value read mid-chain).
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import Any, Callable, Iterable

import torch

import backend_contract
import suite_api
from comparison import differing_parts, to_device
from evidence import dtype_name
from sides import NoReference, Sides, Verdict

from . import traces

SUITE = suite_api.Suite(
    __name__, noun="chain family", nouns="chain families",
    native_phrase="run natively in every drawn chain",
    options={"max_examples": {"type": "int", "default": 50, "help": "chains drawn per case"},
             "length": {"type": "int", "default": 8, "help": "steps a chain has at most"},
             "window": {"type": "int", "default": 8, "help": "ops a window of a model's step holds"},
             "max_windows": {"type": "int", "default": 48, "help": "windows replayed per architecture"}},
    nightly={"options": {"max_examples": 400, "max_windows": 1000}})

DTYPES = (torch.float32, torch.bfloat16)
TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1.6e-2, 1e-2)}
SQUARE = (6, 6)  # the default shape: square, so that a transpose keeps it
OPERANDS = 16  # an operand index is drawn below this, taken modulo the values made so far


class Settings:
    max_examples = 50
    length = 8
    window = 8
    max_windows = 48


@SUITE.configures
def configure(options: dict[str, Any]) -> dict[str, Any]:
    for name in ("max_examples", "length", "window", "max_windows"):
        if options[name] < 1:
            raise ValueError(f"chains: {name} must be 1 or more")
        setattr(Settings, name, options[name])
    return options


def _t(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-1, -2) if x.shape[-1] == x.shape[-2] else x.view(x.shape)


UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "neg": torch.neg, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos,
    "relu": torch.relu, "abs": torch.abs, "half": lambda x: x * 0.5, "exp_tanh": lambda x: torch.exp(torch.tanh(x)),
}
BINARY: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum,
}
# views that keep the shape, so that any two values combine
VIEWS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "t": _t, "first_col": lambda x: x[..., :1].expand(x.shape), "first_row": lambda x: x[..., :1, :].expand(x.shape),
}
INPLACE: dict[str, Callable[[torch.Tensor, torch.Tensor], Any]] = {
    "add_": lambda t, o: t.add_(o), "mul_": lambda t, o: t.mul_(o), "copy_": lambda t, o: t.copy_(o),
    "relu_": lambda t, o: t.relu_(), "tanh_": lambda t, o: t.tanh_(),
}
# views written through: none expanded, so that the write is defined
WRITTEN_VIEWS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "t": _t, "last_col": lambda x: x[..., -1:], "even_cols": lambda x: x[..., ::2], "first_row": lambda x: x[..., :1, :],
}
WRITES: dict[str, Callable[[torch.Tensor], Any]] = {
    "add_1": lambda v: v.add_(1.0), "neg_": lambda v: v.neg_(), "mul_half": lambda v: v.mul_(0.5),
    "zero_": lambda v: v.zero_(),
}
VARIANTS = {
    "plain": "unary, binary and view ops, run in one go on the device against the CPU, every value compared",
    "inplace": "chains with in-place ops writing earlier values: the writes reach the values they alias",
    "readback": "chains with values read back to the host mid-chain: read as they were then",
    "view_written": "chains with a view of an earlier value written in place afterwards",
    "streams": "chains split across two streams with an event between: the second part sees the first's values",
    "model_shapes": "chains at the activation shapes of a tiny Llama (attention scores, MLP activations)",
}
FORCED = {"inplace": "inplace", "readback": "readback", "view_written": "view_write"}


def _describe(step: tuple, made: int) -> str:
    """How evidence shows a step: `v3 = mul(v1, v2)`, `v1.add_(v0)`, `read v2`, `t(v1).neg_()`."""
    kind, name, *operands = step
    if kind == "readback":
        return f"read v{operands[0] % made}"
    a = f"v{operands[0] % made}"
    b = f"v{operands[1] % made}" if len(operands) > 1 else ""
    if kind == "inplace":
        return f"{a}.{name}({b if name in ('add_', 'mul_', 'copy_') else ''})"
    if kind == "view_write":
        view, write = name.split("/")
        return f"{view}({a}).{write}()"
    return f"v{made} = {name}({a}{', ' + b if kind == 'binary' else ''})"


def describe(program: list[tuple]) -> list[str]:
    lines, made = [], 2
    for step in program:
        lines.append(_describe(step, made))
        made += step[0] in ("unary", "binary", "view")
    return lines


def execute(program: list[tuple], x: torch.Tensor, y: torch.Tensor, split: int | None = None,
            streams: Any = None) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Runs the chain over inputs x and y: every value (v0 = x, v1 = y, then each op's result) as it
    is at the end, and each value read mid-chain (a host copy made then). With `split` and a
    device module's `streams`, the steps from `split` on run on a second stream waiting on an event
    recorded after the others."""
    values, read = [x, y], []
    second = None
    for index, step in enumerate(program):
        if streams is not None and index == split:
            event = streams.Event()
            event.record()
            second = streams.Stream()
            second.wait_event(event)
            context = streams.stream(second)
            context.__enter__()
        kind, name, *operands = step
        a = values[operands[0] % len(values)]
        if kind == "unary":
            values.append(UNARY[name](a))
        elif kind == "binary":
            values.append(BINARY[name](a, values[operands[1] % len(values)]))
        elif kind == "view":
            values.append(VIEWS[name](a))
        elif kind == "inplace":
            other = values[operands[1] % len(values)]
            if _overlaps(a, other):
                raise IllDefined(f"{_describe(step, len(values))} reads what it writes through another view")
            INPLACE[name](a, other)
        elif kind == "view_write":
            view, write = name.split("/")
            WRITES[write](WRITTEN_VIEWS[view](a))
        elif kind == "readback":
            read.append(a.to("cpu", copy=True))
    if second is not None:
        context.__exit__(None, None, None)
        streams.current_stream().wait_stream(second)
    return values, read


class IllDefined(Exception):
    """A chain whose values depend on the order a kernel visits elements in: not drawn."""


def _overlaps(target: torch.Tensor, other: torch.Tensor) -> bool:
    """Whether an in-place write into `target` reads `other` while it changes: the two share memory
    without being one tensor (an expanded column of target, its transpose). The CPU computes such a
    write in its own element order, without refusing it (an expanded view's overlap is too hard for
    it to tell)."""
    if target.untyped_storage().data_ptr() != other.untyped_storage().data_ptr():
        return False
    return (target.storage_offset(), target.shape, target.stride()) != (other.storage_offset(), other.shape,
                                                                         other.stride())


def _steps(st, length: int, forced: str | None):
    operand = st.integers(0, OPERANDS - 1)
    plain = st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), operand),
        st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), operand, operand),
        st.tuples(st.just("view"), st.sampled_from(sorted(VIEWS)), operand))
    extra = {
        "inplace": st.tuples(st.just("inplace"), st.sampled_from(sorted(INPLACE)), operand, operand),
        "readback": st.tuples(st.just("readback"), st.just("host"), operand),
        "view_write": st.tuples(st.just("view_write"),
                                st.sampled_from([f"{v}/{w}" for v in sorted(WRITTEN_VIEWS) for w in sorted(WRITES)]),
                                operand),
    }
    step = st.one_of(plain, extra[forced]) if forced else plain
    program = st.lists(step, min_size=1, max_size=length)
    if forced is None:
        return program
    # The variant's own step once at least, anywhere, and an op reading what it wrote or read right
    # after it, as a model goes on with a value it has just updated (x.add_(residual); act(x)).
    then = st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)))
    return st.tuples(program, extra[forced], then, st.integers(0, length)).map(
        lambda drawn: drawn[0][:drawn[3]] + [drawn[1], (*drawn[2], drawn[1][2])] + drawn[0][drawn[3]:])


@cache
def model_shapes() -> list[tuple[int, ...]]:
    """Activation shapes of the hf suite's tiny Llama: attention scores (batch, heads, seq, seq) and
    MLP activations (batch * seq, intermediate), at batch 2 and seq 7."""
    from suitelib.tiny_models import tiny_config

    config = tiny_config("LlamaForCausalLM")
    batch, seq = 2, 7
    return [(batch, config.num_attention_heads, seq, seq), (batch * seq, config.intermediate_size)]


def _inputs(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x, y = (torch.rand(shape, generator=generator) * 4 - 2 for _ in range(2))
    return x.to(dtype), y.to(dtype)


def _device_streams(device: str) -> Any:
    module = getattr(torch, device.split(":")[0], None)
    if all(callable(getattr(module, name, None)) for name in ("Stream", "Event", "stream", "current_stream")):
        return module
    return None


def _no_streams(ctx) -> str | None:
    """Why the streams variant cannot run here: the device module has no streams and events."""
    if _device_streams(ctx.device) is not None:
        return None
    return f"the device module torch.{ctx.device.split(':')[0]} has no Stream, Event, stream and current_stream"


@SUITE.makes_cases
class ChainCase(suite_api.Case):
    """A case of the suite: its dtype and tolerance, what its chains or windows add up to (`chains`,
    with what the device says it fused meanwhile), which every verdict carries too."""

    def __init__(self, case_id: suite_api.CaseId, ctx) -> None:
        super().__init__(case_id, ctx)
        if case_id.subject == "elementwise":
            self.dtype = {dtype_name(d): d for d in DTYPES}.get(case_id.dtype)
            if self.dtype is None:
                raise suite_api.unknown(case_id, "dtype")
        elif case_id.subject.startswith("hf."):
            self.architecture, self.dtype = case_id.subject.removeprefix("hf."), torch.float32
            if self.architecture not in ARCHITECTURES or case_id.dtype != "float32":
                raise suite_api.unknown(case_id, "architecture at that dtype")
        else:
            raise suite_api.unknown(case_id, "chain family")
        if case_id.check not in SUITE.checks_for(case_id.subject):
            raise suite_api.unknown(case_id, f"check {case_id.check} of the {case_id.subject} family")
        self.rtol, self.atol = TOLERANCES[self.dtype]
        self.chains: dict[str, Any] = {}  # what the case ran, as far as it got
        self.fusion = Fusion()

    def _chains(self) -> dict[str, Any]:
        return {**self.chains, "device_fusion": self.fusion.seen()}

    def failed(self, verdict: Verdict) -> tuple[str, dict[str, Any]]:
        return super().failed(Verdict(verdict.outcome, {**verdict.evidence, "chains": self._chains()}))

    def conclude(self) -> tuple[str, dict[str, Any]]:
        self.evidence.update(chains=self._chains(), rtol=self.rtol, atol=self.atol)
        return super().conclude()


def _led(lead: str, verdict: Verdict) -> Verdict:
    """The verdict, its message led by the chain or window that failed (`[...] message`)."""
    return Verdict(verdict.outcome, {**verdict.evidence, "message": f"[{lead}] {verdict.evidence.get('message', '')}"})


def run_variant(case: ChainCase) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed, settings
    from hypothesis import strategies as st

    ctx, dtype, rtol, atol, variant = case.ctx, case.dtype, case.rtol, case.atol, case.id.check
    streams = _device_streams(ctx.device) if variant == "streams" else None
    shapes = model_shapes() if variant == "model_shapes" else [SQUARE]
    case.chains = {"seed": ctx.seed, "examples_run": 0, "steps_drawn": {}}
    drawn = case.chains["steps_drawn"]

    @given(program=_steps(st, Settings.length, FORCED.get(variant)), shape=st.sampled_from(shapes),
           values=st.integers(0, 2**16), split=st.integers(1, Settings.length))
    def chain(program: list[tuple], shape: tuple[int, ...], values: int, split: int) -> None:
        case.chains["examples_run"] += 1
        for step in program:
            drawn[step[0]] = drawn.get(step[0], 0) + 1
        sides = Sides(ctx, rtol, atol)
        sides.where = {"chain": describe(program), "shape": list(shape)}
        if streams is not None:
            split = min(split, len(program))
            sides.where["second_stream_from_step"] = split
        x, y = _inputs(shape, dtype, values)
        try:
            expected = sides.cpu(execute, program, x, y)
        except NoReference:
            reject()  # the chain is not defined (an in-place write into an expanded view)
        actual = sides.device(lambda a, b: execute(program, a, b, split, streams), *to_device((x, y), ctx.device))
        at_float64 = cache(lambda: sides.cpu(execute, program, x.double(), y.double()))
        for what, got, want, index in _exposed(actual, expected):
            reference = (lambda index=index: _pick(at_float64(), index)) if dtype.itemsize < 4 else None
            sides.compare(got, want, {"compared": what}, reference=reference)

    search = seed(ctx.seed * 1_000_003 + zlib.crc32(str(case.id).encode()))(settings(
        max_examples=Settings.max_examples, deadline=None, database=None, derandomize=False,
        phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)(chain))
    try:
        search()
    except Verdict as verdict:  # the shrunk chain's
        raise _led("; ".join(verdict.evidence.get("chain", [])), verdict) from None


class Fusion:
    """What the device says it fused meanwhile: the deltas of its execution_stats()'s `fused_chains`
    and `fused_ops` (docs/backends.md), or "unavailable" where it declares no such counters."""

    FIELDS = ("fused_chains", "fused_ops")

    def __init__(self) -> None:
        self.stats = backend_contract.current().function("execution_stats")
        self.before = self._read()

    def _read(self) -> dict[str, int] | None:
        stats = self.stats() if self.stats else None
        if not isinstance(stats, dict) or not all(field in stats for field in self.FIELDS):
            return None
        return {field: int(stats[field]) for field in self.FIELDS}

    def seen(self) -> dict[str, int] | str:
        after = self._read()
        if after is None or self.before is None:
            return "unavailable"
        return {field: after[field] - self.before[field] for field in self.FIELDS}


def _exposed(actual, expected) -> Iterable[tuple[str, torch.Tensor, torch.Tensor, tuple[int, int]]]:
    """Each value and each mid-chain read, named as the chain names it, device's and CPU's."""
    (values, read), (cpu_values, cpu_read) = actual, expected
    for i, (got, want) in enumerate(zip(values, cpu_values)):
        yield f"v{i}", got, want, (0, i)
    for i, (got, want) in enumerate(zip(read, cpu_read)):
        yield f"read {i}", got, want, (1, i)


def _pick(tree, index: tuple[int, int]) -> torch.Tensor:
    return tree[index[0]][index[1]]


def _drawn(subject: str) -> bool:
    return subject == "elementwise"


for _name, _description in VARIANTS.items():
    suite_api.check(_name, _description, applies=_drawn, requires=_no_streams if _name == "streams" else None)(
        run_variant)


@suite_api.check("windows", "windows of the aten ops one training step of the tiny model runs (forward with "
                 "labels, the loss's backward), each replayed alone on the device against the CPU, every value "
                 "compared; a failing window narrowed to the fewest ops that still fail",
                 applies=lambda subject: not _drawn(subject))
def run_windows(case: ChainCase) -> None:
    ctx, rtol, atol = case.ctx, case.rtol, case.atol
    recording = traces.record(case.architecture, torch.float32, ctx.seed)
    starts = traces.windows(recording, Settings.window, Settings.max_windows)
    record = case.chains = {"calls": len(recording.calls), "forward_calls": recording.forward_calls,
                            "window": Settings.window, "windows_run": 0, "backward_windows": 0, "values_compared": 0,
                            "values_undetermined": 0}

    def judge(first: int, last: int) -> tuple[int, int]:
        """The window's values compared and undetermined; a Verdict where one differs."""
        calls = recording.calls[first:last]
        sides = Sides(ctx, rtol, atol)
        sides.where = {"window": traces.describe(calls, first),
                       "phase": "backward" if calls[0].backward else "forward"}
        expected = sides.cpu(traces.replay, calls, "cpu")
        # A buffer the window allocates and a later op (past its end) fills holds whatever memory
        # held: the CPU's run again, with new memory poisoned, tells which values the window decides.
        undetermined = differing_parts(expected, sides.again(traces.replay, calls, "cpu")(), rtol, atol)
        actual = sides.device(traces.replay, calls, ctx.device)
        for index, (got, want) in enumerate(zip(actual, expected)):
            if f"[{index}]" not in undetermined:
                sides.compare(got, want, {"compared": f"value {index} of the window"})
        return len(expected) - len(undetermined), len(undetermined)

    for start in starts:
        record["windows_run"] += 1
        record["backward_windows"] += recording.calls[start].backward
        try:
            compared, undetermined = judge(start, start + Settings.window)
        except NoReference:
            continue  # the CPU cannot replay it alone (a call that needs what came before it)
        except Verdict as verdict:
            first, last, verdict = _narrowed(judge, start, start + Settings.window, verdict)
            raise _led(f"window of {last - first} op(s) at #{first}", verdict) from None
        record["values_compared"] += compared
        record["values_undetermined"] += undetermined
    if record["windows_run"] == 0:
        raise suite_api.Skip("the recording has no window without a random op")


def _narrowed(judge: Callable[[int, int], Any], first: int, last: int,
              verdict: Verdict) -> tuple[int, int, Verdict]:
    """The fewest calls of a failing window that still fail (dropped from its start, then its end),
    and their verdict."""
    def failure(a: int, b: int) -> Verdict | None:
        try:
            judge(a, b)
        except Verdict as failed:
            return failed
        except NoReference:
            return None
        return None

    while last - first > 1 and (failed := failure(first + 1, last)):
        first, verdict = first + 1, failed
    while last - first > 1 and (failed := failure(first, last - 1)):
        last, verdict = last - 1, failed
    return first, last, verdict


# The architectures whose training steps the windows replay: dense attention with RoPE and a gated
# MLP, its grouped-query and soft-capped kin, learned positions with a GELU MLP, and a mixture of
# experts (routing: top-k, index_add).
ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "Gemma2ForCausalLM", "GPT2LMHeadModel", "Phi3ForCausalLM",
                 "MixtralForCausalLM")


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    for dtype in DTYPES:
        for check in SUITE.checks_for("elementwise"):
            yield "elementwise", dtype_name(dtype), check
    for architecture in ARCHITECTURES:
        yield f"hf.{architecture}", "float32", "windows"
