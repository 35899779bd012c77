"""The ops suite's `random` check: the random ops' generator contract and distribution.

Which OpInfos (a rule plus a reviewed list): those named like one of torch's random ops
(RANDOM_NAMES: the "Random sampling" functions of torch's documentation, the in-place samplers,
the dropout family and rrelu) or whose values upstream does not compare because they are
"non-deterministic" (values_not_comparable: fractional max pooling, SDPA with dropout, ...),
minus those with the reviewed fact not_random (facts.json: uninitialized memory, estimators of
deterministic results). Each
selected OpInfo needs a draw in DRAWS (reviewed: the op called with fixed arguments, without
upstream's wrapper_set_seed, shaped to give DRAW_COUNT independent draws); a selected OpInfo
without one is an `error` of the harness, so a new torch's random op gets reviewed.

Cases at every floating dtype the op supports on the CPU: a case costs a dozen draws of 10^4
values (milliseconds on each side), and half-precision samplers are separate kernels.

Sub-checks (each failing one is named in the evidence as `variant`, with a `property`):
  seeded       the device generator seeded alike gives the same draw twice, whatever torch's
               CPU generator holds in between (a device op drawing from the CPU's fails here)
  reseeded     another seed gives another draw
  successive   two successive draws without reseeding differ: the generator advances
  rng_state    torch.<device>.set_rng_state(get_rng_state()) replays the draw made after it
               ("unavailable" when the device module has no such functions)
  generator    a torch.Generator(device) passed as generator= replays its draw when reseeded,
               and leaves the default generator's state alone (ops that accept generator=;
               "unavailable" when the device has no Generator)
  distribution the device's draw has the CPU's dtype and shape, and matches the CPU's draw
               (another fixed seed) statistically: means and variances within 5 standard errors
               (not for distributions without them: cauchy), and a two-sample
               Kolmogorov-Smirnov test at p >= 1e-4. Seeds are fixed, so the check is
               deterministic; the statistics are recorded in the evidence.
  contract     the op's own contract (CONTRACTS, reviewed per op), which a pooled distribution
               cannot see: per-element parameters drive each element's statistics (bernoulli's
               p, normal's mean and std, multinomial's rows, each position's mean within 5
               standard errors of its own parameter), bounds (randint, uniform, rand_like within
               their ranges, every integer of randint's range drawn), draws without replacement
               distinct. An op with no reviewed contract says so ("none reviewed").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

import numpy
import torch
import torch.nn.functional as F

from dispatch_capture import uncounted
from evidence import exception_evidence
from sides import Verdict
from vocabulary import Outcome, Where

import suite_api

from suitelib import opinfo, reviewed
from suitelib.opinfo import facts, tolerances

DESCRIPTION = ("random ops: the device generator seeded alike reproduces a draw, advances between draws, "
               "replays it through get/set_rng_state and torch.Generator, and the draws match the CPU's "
               "distribution (means, variances, two-sample Kolmogorov-Smirnov)")

DRAW_COUNT = 10_000
Z_LIMIT = 5.0  # standard errors
P_LIMIT = 1e-4  # KS p-value
CPU_SEED_OFFSET = 7919  # the CPU draws with another seed: a real two-sample test, not a replay

# torch's random ops by name (OpInfo names, "nn.functional." removed).
RANDOM_NAMES = frozenset({
    "bernoulli", "multinomial", "normal", "poisson", "rand", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "randperm", "uniform", "exponential", "geometric", "log_normal", "cauchy", "random",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "rrelu",
})

@dataclass(frozen=True)
class Draw:
    """How to draw DRAW_COUNT independent values of a random op: call(device, dtype, **gen)
    returns them (any shape); gen is {"generator": g} when `generator` says the op takes one."""
    call: Callable[..., torch.Tensor]
    generator: bool = True
    moments: bool = True  # whether the distribution has a mean and a variance


N = DRAW_COUNT


# A draw's inputs and what it makes of the op's result are the harness's: made with the capture
# aside (uncounted), only the op's own ops are the case's.
@uncounted()
def _empty(device, dtype):
    return torch.empty(N, device=device, dtype=dtype)


@uncounted()
def _full(device, dtype, value: float, *shape):
    return torch.full(shape or (N,), value, device=device, dtype=dtype)


def _ones(device, dtype, *shape):
    return _full(device, dtype, 1.0, *shape)


@uncounted()
def _placed(t: torch.Tensor, device, *shape) -> torch.Tensor:
    """A CPU tensor on the device (expanded to `shape` and made contiguous, given one)."""
    t = t.to(device)
    return t.expand(*shape).contiguous() if shape else t


@uncounted()
def _host(t: torch.Tensor) -> torch.Tensor:
    """A draw copied back to the host."""
    return t.cpu()


def _feature(dropout, dims: int):
    """A feature dropout over N channels of 2**dims elements, each draw a channel's mean: a
    channel is kept or dropped whole, so an elementwise mask gives other values."""
    return Draw(lambda device, dtype: _channel_means(dropout(_ones(device, dtype, 100, 100, *([2] * dims)), 0.4, True),
                                                     dims), generator=False)


@uncounted()
def _channel_means(t: torch.Tensor, dims: int) -> torch.Tensor:
    return t.mean(tuple(range(2, 2 + dims)))


def _fractional(pool, dims: int):
    """A fractional max pooling of N channels of arange (so the pooled value is the window's
    position), each draw one output element of a channel (channels draw their offsets apart)."""
    size, kernel, out = (9, 3, 5) if dims == 2 else (5, 2, 3)

    def call(device, dtype):
        with uncounted():
            grid = torch.arange(size ** dims, device=device, dtype=dtype).reshape([1, 1] + [size] * dims)
            grid = grid.expand([100, 100] + [size] * dims).contiguous()
        result = pool(grid, kernel, output_size=out)
        with uncounted():
            return result[(slice(None), slice(None)) + (1,) * dims]
    return Draw(call, generator=False)


def _attention(device, dtype):
    """Uniform attention over 100 keys whose values are one-hot: each output element is one
    key's dropout decision, scaled."""
    with uncounted():
        q = torch.zeros(1, 1, 100, 8, device=device, dtype=dtype)
        v = torch.eye(100, device=device, dtype=dtype)[None, None]
    return F.scaled_dot_product_attention(q, q, v, dropout_p=0.4)


DRAWS: dict[str, Draw] = {
    "bernoulli": Draw(lambda device, dtype, **g: torch.bernoulli(_full(device, dtype, 0.3), **g)),
    "multinomial": Draw(lambda device, dtype, **g: torch.multinomial(
        _placed(torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=dtype), device), N, replacement=True, **g)),
    "normal": Draw(lambda device, dtype, **g: torch.normal(_full(device, dtype, 1.5), _full(device, dtype, 2.0), **g)),
    "normal.number_mean": Draw(lambda device, dtype, **g: torch.normal(
        0.3, 1.6, (N,), device=device, dtype=dtype, **g)),
    "normal.in_place": Draw(lambda device, dtype, **g: _empty(device, dtype).normal_(-2.0, 0.5, **g)),
    "uniform": Draw(lambda device, dtype, **g: _empty(device, dtype).uniform_(-3.0, 5.0, **g)),
    "cauchy": Draw(lambda device, dtype, **g: _empty(device, dtype).cauchy_(0.0, 1.0, **g), moments=False),
    "exponential": Draw(lambda device, dtype, **g: _empty(device, dtype).exponential_(1.5, **g)),
    "geometric": Draw(lambda device, dtype, **g: _empty(device, dtype).geometric_(0.3, **g)),
    "log_normal": Draw(lambda device, dtype, **g: _empty(device, dtype).log_normal_(0.5, 0.5, **g)),
    "randn": Draw(lambda device, dtype, **g: torch.randn(N, device=device, dtype=dtype, **g)),
    "randn_like": Draw(lambda device, dtype, **g: torch.randn_like(_empty(device, dtype), **g)),
    "rand_like": Draw(lambda device, dtype, **g: torch.rand_like(_empty(device, dtype), **g)),
    "randint": Draw(lambda device, dtype, **g: torch.randint(3, 10, (N,), device=device, dtype=dtype, **g)),
    "randint_like": Draw(lambda device, dtype, **g: torch.randint_like(_empty(device, dtype), 3, 10, **g)),
    "nn.functional.dropout": Draw(lambda device, dtype: F.dropout(_ones(device, dtype), 0.4, True), generator=False),
    "nn.functional.alpha_dropout": Draw(lambda device, dtype: F.alpha_dropout(_ones(device, dtype), 0.4, True),
                                        generator=False),
    "nn.functional.dropout2d": _feature(F.dropout2d, 2),
    "nn.functional.dropout3d": _feature(F.dropout3d, 3),
    "nn.functional.feature_alpha_dropout.with_train": _feature(F.feature_alpha_dropout, 2),
    "nn.functional.rrelu": Draw(lambda device, dtype: F.rrelu(_full(device, dtype, -1.0), 0.1, 0.3, True),
                                generator=False),
    "nn.functional.fractional_max_pool2d": _fractional(F.fractional_max_pool2d, 2),
    "nn.functional.fractional_max_pool3d": _fractional(F.fractional_max_pool3d, 3),
    "nn.functional.scaled_dot_product_attention": Draw(_attention, generator=False),
}


# --- contracts: what each element's draw must satisfy, beyond the pooled distribution ------

ROWS, POSITIONS = 2000, 16  # draws per position, positions with parameters of their own


@dataclass(frozen=True)
class Contract:
    """A property of one op's draws: check(device, dtype, **gen) gives (holds, what was found,
    statistics)."""
    what: str
    check: Callable[..., tuple[bool, str, dict[str, Any]]]


def _worst(z: torch.Tensor, parameters: torch.Tensor, name: str) -> tuple[bool, str, dict[str, Any]]:
    """Per-position z-scores against the limit: the worst position and its parameter."""
    z = torch.nan_to_num(z.to(torch.float64), nan=math.inf)
    at = int(z.argmax())
    found = {"positions": int(z.numel()), "draws_per_position": ROWS, "worst_z": float(z[at]), "worst_position": at,
             f"worst_{name}": float(parameters.reshape(-1)[at])}
    return bool(z.max() <= Z_LIMIT), f"position {at} ({name} {float(parameters.reshape(-1)[at]):.4g}) is " \
                                      f"{float(z[at]):.3g} standard errors off", found


def _bernoulli_per_element(device, dtype, **g):
    p = torch.linspace(0.05, 0.95, POSITIONS, dtype=dtype)
    draws = _host(torch.bernoulli(_placed(p, device, ROWS, POSITIONS), **g)).to(torch.float64)
    if not bool(((draws == 0) | (draws == 1)).all()):
        return False, "values other than 0 and 1", {}
    q = p.to(torch.float64)
    return _worst((draws.mean(0) - q).abs() / (q * (1 - q) / ROWS).sqrt(), q, "p")


def _normal_per_element(device, dtype, **g):
    mean = torch.linspace(-4.0, 4.0, POSITIONS, dtype=dtype)
    std = torch.linspace(0.5, 2.0, POSITIONS, dtype=dtype)
    draws = _host(torch.normal(_placed(mean, device, ROWS, POSITIONS), _placed(std, device, ROWS, POSITIONS),
                               **g)).to(torch.float64)
    m, sd = mean.to(torch.float64), std.to(torch.float64)
    z_mean = (draws.mean(0) - m).abs() / (sd / math.sqrt(ROWS))
    z_var = (draws.var(0) - sd ** 2).abs() / (sd ** 2 * math.sqrt(2.0 / (ROWS - 1)))
    return _worst(torch.maximum(z_mean, z_var), m, "mean")


def _multinomial_rows(device, dtype, **g):
    """Each row its own distribution (row i's weight on category i % K); with replacement, each
    row's frequencies are its own probabilities; without, a row of K draws is every category once."""
    k = 8
    weights = torch.ones(POSITIONS, k, dtype=dtype)
    weights[torch.arange(POSITIONS), torch.arange(POSITIONS) % k] = 5.0
    probs = (weights / weights.sum(1, keepdim=True)).to(torch.float64)
    draws = _host(torch.multinomial(_placed(weights, device), ROWS, replacement=True, **g))
    counts = torch.zeros(POSITIONS, k, dtype=torch.float64).scatter_add_(1, draws, torch.ones_like(draws, dtype=torch.float64))
    z = ((counts / ROWS - probs).abs() / (probs * (1 - probs) / ROWS).sqrt()).max(1).values
    holds, found, stats = _worst(z, torch.arange(POSITIONS) % k, "heavy_category")
    if not holds:
        return holds, f"row frequencies: {found}", stats
    apart = _host(torch.multinomial(_placed(weights, device), k, replacement=False, **g))
    repeated = [i for i, row in enumerate(apart.tolist()) if len(set(row)) != k]
    if repeated:
        return False, f"draws without replacement repeat a category in rows {repeated[:5]}", stats
    return True, "", stats


def _within(low: float, high: float, integers: bool):
    """Every value in [low, high) (integers: every integer of the range drawn, none outside)."""
    def check(draw: Callable[..., torch.Tensor]):
        def run(device, dtype, **g):
            values = _host(draw(device, dtype, **g)).to(torch.float64)
            found = {"min": float(values.min()), "max": float(values.max()), "range": [low, high]}
            if not bool(((values >= low) & (values < high)).all()):
                return False, f"values outside [{low:g}, {high:g}): min {found['min']:g}, max {found['max']:g}", found
            if integers:
                missing = sorted(set(range(int(low), int(high))) - set(values.to(torch.int64).tolist()))
                if bool((values != values.round()).any()) or missing:
                    return False, f"not every integer of the range drawn (missing {missing}) or a non-integer", found
            return True, "", found
        return run
    return check


CONTRACTS: dict[str, Contract] = {
    "bernoulli": Contract("each element is drawn with its own p", _bernoulli_per_element),
    "normal": Contract("each element is drawn with its own mean and std", _normal_per_element),
    "multinomial": Contract("each row is drawn from its own probabilities; without replacement, distinct",
                            _multinomial_rows),
    "randint": Contract("values within [low, high), every one drawn", _within(3, 10, True)(DRAWS["randint"].call)),
    "randint_like": Contract("values within [low, high), every one drawn",
                             _within(3, 10, True)(DRAWS["randint_like"].call)),
    "uniform": Contract("values within [from, to)", _within(-3.0, 5.0, False)(DRAWS["uniform"].call)),
    "rand_like": Contract("values within [0, 1)", _within(0.0, 1.0, False)(DRAWS["rand_like"].call)),
}


def _selected(op) -> bool:
    name = op.name.removeprefix("nn.functional.")
    if name in RANDOM_NAMES:
        return True
    floating = [d for d in op.supported_dtypes("cpu") if d.is_floating_point]
    reason = tolerances.values_not_comparable(op, floating[0]) if floating else None
    return reason is not None and "non-deterministic" in reason


@reviewed.document
@cache
def not_random_facts() -> dict[str, dict[str, Any]]:
    """facts.json's not_random facts, each about an OpInfo the check's rule selects."""
    return facts.applying("not_random", lambda op, _: _selected(op), "the random check's rule does not select it")


def applies(op, dtype: torch.dtype) -> bool:
    return dtype.is_floating_point and facts.about(op, "not_random") is None and _selected(op)


# --- statistics ---------------------------------------------------------------------------

def _moments(x: numpy.ndarray) -> tuple[float, float, float]:
    """(mean, variance, fourth central moment) of a sample."""
    mean = float(x.mean())
    centred = x - mean
    return mean, float((centred ** 2).mean()), float((centred ** 4).mean())


def _z(difference: float, se: float) -> float:
    if se == 0.0:
        return 0.0 if difference == 0.0 else math.inf
    return abs(difference) / se


def statistics(device: numpy.ndarray, cpu: numpy.ndarray, moments: bool) -> dict[str, Any]:
    """Two samples compared: means and variances (their difference in standard errors: for the
    mean sqrt(var/n + var'/n'), for the variance sqrt((m4 - var^2)/n + ...), the sample
    variance's large-sample standard error) and scipy's two-sample KS test. The asymptotic
    p-value: at n = 10^4 per side it is accurate, and the exact method gives up on tied values
    (the discrete distributions) with a warning."""
    from scipy.stats import ks_2samp  # only this check needs scipy: not at the suite's import

    ks = ks_2samp(device, cpu, method="asymp")
    found: dict[str, Any] = {"draws": [len(device), len(cpu)], "ks_statistic": float(ks.statistic),
                             "ks_pvalue": float(ks.pvalue)}
    if moments:
        (m_d, v_d, f_d), (m_c, v_c, f_c) = _moments(device), _moments(cpu)
        n_d, n_c = len(device), len(cpu)
        found.update({
            "device_mean": m_d, "cpu_mean": m_c, "device_variance": v_d, "cpu_variance": v_c,
            "mean_z": _z(m_d - m_c, math.sqrt(v_d / n_d + v_c / n_c)),
            "variance_z": _z(v_d - v_c, math.sqrt(max(f_d - v_d ** 2, 0.0) / n_d + max(f_c - v_c ** 2, 0.0) / n_c)),
        })
    else:
        found["moments"] = "not compared: the distribution has no mean or variance"
    return found


# --- the check ----------------------------------------------------------------------------

class _Run:
    """One case's draws on the device, each seeded or not as the sub-check says."""

    def __init__(self, case, draw: Draw) -> None:
        self.case, self.draw = case, draw
        self.device = case.ctx.device
        self.module = getattr(torch, torch.device(self.device).type, None)  # torch.<device>
        self.seed = int(case.ctx.seed)

    def on_device(self, variant: str, **gen) -> torch.Tensor:
        try:
            return _host(self.draw.call(self.device, self.case.dtype, **gen))
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**exception_evidence(exc), "variant": variant}) from exc

    def seeded(self, variant: str, seed: int, cpu_seed: int | None = None, **gen) -> torch.Tensor:
        """A draw with the device's generators (torch.manual_seed seeds them) seeded `seed` and
        torch's CPU generator `cpu_seed`."""
        torch.random._seed_custom_device(seed)
        torch.default_generator.manual_seed(self.seed if cpu_seed is None else cpu_seed)
        return self.on_device(variant, **gen)

    def state(self, name: str):
        function = getattr(self.module, name, None)
        return function if callable(function) else None


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(((a == b) | (a.isnan() & b.isnan())).all())


def _differing(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
    return f"{int((a != b).sum())} of {a.numel()} values differ"


@suite_api.check("random", DESCRIPTION, applies=applies)
def run(case) -> None:
    subject = opinfo.subject(case.op)
    draw = DRAWS.get(subject)
    if draw is None:
        raise Verdict(Outcome.ERROR, {
            "exception_type": "LookupError", "where": Where.HARNESS,
            "message": f"{subject} is a random op (suites/ops/ops_random.py's rule) with no reviewed draw: "
                       f"add it to DRAWS, or a not_random fact with the reason to suitelib/opinfo/facts.json"})
    r = _Run(case, draw)
    results: dict[str, str] = {}
    failures: list[tuple[str, str, str]] = []  # (variant, property, what was found)

    def judge(variant: str, prop: str, ok: bool, found: str) -> None:
        results[variant] = Outcome.PASS.value if ok else f"{Outcome.FAIL.value}: {found}"
        if not ok:
            failures.append((variant, prop, found))

    s = r.seed
    first = r.seeded("seeded", s, cpu_seed=s)
    again = r.seeded("seeded", s, cpu_seed=s + 1)
    judge("seeded", "the same device seed gives the same draw, whatever torch's CPU generator holds",
          _same(first, again), _differing(first, again))
    following = r.on_device("successive")
    judge("successive", "successive draws differ (the generator advances)", not _same(again, following),
          "the draw after it is identical")
    other = r.seeded("reseeded", s + 1, cpu_seed=s)
    judge("reseeded", "another seed gives another draw", not _same(first, other), "identical draws")

    get_state, set_state = r.state("get_rng_state"), r.state("set_rng_state")
    if get_state is None or set_state is None:
        results["rng_state"] = f"unavailable: torch.{torch.device(r.device).type} has no get_rng_state/set_rng_state"
    else:
        r.seeded("rng_state", s)
        r.on_device("rng_state")  # not the first draw after seeding: a restore must keep the position
        saved = get_state()
        expected = r.on_device("rng_state")
        r.on_device("rng_state")
        set_state(saved)
        replayed = r.on_device("rng_state")
        judge("rng_state", "set_rng_state(get_rng_state()) replays the draw made after it",
              _same(expected, replayed), _differing(expected, replayed))

    if not draw.generator:
        results["generator"] = "not applicable: the op takes no generator="
    else:
        try:
            generator = torch.Generator(r.device)
        except Exception as exc:
            generator = None
            results["generator"] = f"unavailable: torch.Generator({r.device!r}) raised {type(exc).__name__}: {exc}"[:300]
        if generator is not None:
            r.seeded("generator", s + 2)
            before = get_state() if get_state is not None else None
            generator.manual_seed(s)
            mine = r.on_device("generator", generator=generator)
            untouched = before is None or torch.equal(before, get_state())
            r.on_device("generator")  # the default generator advances; `generator` must not care
            generator.manual_seed(s)
            replay = r.on_device("generator", generator=generator)
            ok = _same(mine, replay) and untouched
            judge("generator", "a seeded torch.Generator(device) passed as generator= replays its draw and "
                  "leaves the default generator alone", ok,
                  _differing(mine, replay) if not _same(mine, replay) else "the default generator's state changed")

    device_draw = r.seeded("distribution", s)
    try:
        torch.default_generator.manual_seed(s + CPU_SEED_OFFSET)
        cpu_draw = draw.call("cpu", case.dtype)
    except Exception as exc:
        raise Verdict(Outcome.ERROR, {**exception_evidence(exc), "where": Where.HARNESS, "variant": "distribution",
                                      "message": f"the CPU cannot draw: {exc}"[:2000]}) from exc
    found: dict[str, Any] = {}
    if device_draw.dtype != cpu_draw.dtype or device_draw.shape != cpu_draw.shape:
        judge("distribution", "the draw has the CPU's dtype and shape", False,
              f"{device_draw.dtype}{list(device_draw.shape)} on the device, {cpu_draw.dtype}{list(cpu_draw.shape)} "
              f"on the CPU")
    else:
        d = device_draw.reshape(-1).to(torch.float64).numpy()
        c = cpu_draw.reshape(-1).to(torch.float64).numpy()
        found = statistics(d, c, draw.moments)
        found["identical_to_cpu_draw"] = bool(numpy.array_equal(d, c))
        bad = [f"{name} {found[name]:.3g} > {Z_LIMIT:g}" for name in ("mean_z", "variance_z")
               if name in found and not found[name] <= Z_LIMIT]
        if not found["ks_pvalue"] >= P_LIMIT:
            bad.append(f"KS statistic {found['ks_statistic']:.4g}, p {found['ks_pvalue']:.3g} < {P_LIMIT:g}")
        judge("distribution", "the draws match the CPU's distribution (means and variances within 5 standard "
              "errors, two-sample KS p >= 1e-4)", not bad, "; ".join(bad))

    contract = CONTRACTS.get(subject)
    if contract is None:
        results["contract"] = "none reviewed: the pooled distribution only"
    else:
        torch.random._seed_custom_device(s)
        try:
            holds, what, stats = contract.check(r.device, case.dtype, **({"generator": None} if draw.generator else {}))
        except Exception as exc:
            raise Verdict(Outcome.ERROR, {**exception_evidence(exc), "variant": "contract"}) from exc
        case.evidence["contract"] = {"property": contract.what, **stats}
        judge("contract", contract.what, holds, what)

    case.evidence.update({"statistics": found, "sub_checks": results, "draws": DRAW_COUNT, "seed": s,
                          "cpu_seed": s + CPU_SEED_OFFSET})
    case.compared = 1
    if failures:
        variant, prop, what = failures[0]
        message = "; ".join(f"{v}: {p}: {w}" for v, p, w in failures)
        raise Verdict(Outcome.FAIL, {**case.evidence, "variant": variant, "property": prop,
                                     "failed_sub_checks": [v for v, _, _ in failures], "message": message[:2000]})
