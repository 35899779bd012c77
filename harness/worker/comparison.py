"""What "the device's result differs from the CPU's" means, and how inputs reach the device: one
definition for every suite (ops, hf) and for check-model's probe, so their evidence agrees.

compare() raises Mismatch (message, max_abs, max_rel) or returns (max_abs_error, max_rel_error).
Errors are taken over the elements finite on both sides (NaN and inf positions are assert_close's
business, with equal_nan=True); a relative error divides by |expected| clamped to float64's
smallest normal number, so a difference where the CPU gives 0 is a huge (or inf) relative error,
not one scaled by an arbitrary epsilon (the hf suite once clamped at 1e-12). Errors that are not
finite stay floats: the worker sends them as the strings "inf"/"nan".

Exactness is owed where the CPU's result is not a floating-point or complex number: integer,
bool and index outputs (and those parts of a mixed output) are compared exactly, whatever
tolerance the case's dtype gives its floats (an argmax off by one is wrong at any dtype).
A mismatch inside a structure names the part that differs (`[1]`, `.arguments[0]`).

Low precision is judged three ways where a reference is given (compare(reference=)): a bfloat16
or float16 result that is not the CPU's to the bit is measured against the same call at float64
(the CPU's own result at the dtype too), and the device fails when its error is more than
NORMWISE_MULTIPLE times the CPU's own normwise (at least half a rounding of the dtype), or more
than ELEMENTWISE_MULTIPLE times it at any element (at least one rounding at the element's value),
plus one rounding at the output's largest magnitude (for elements near zero amid large ones) and
the case's atol where the whole output is near zero (a gradient that sums to zero). A fixed rtol lets a kernel
that loses most of its bits pass on small values and fails a faithful one on ill-conditioned input.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree

from dispatch_capture import uncounted
from evidence import dtype_name


LOW_PRECISION = frozenset({torch.bfloat16, torch.float16})
NORMWISE_MULTIPLE = 4.0
ELEMENTWISE_MULTIPLE = 8.0


class Accuracy:
    """What three-way judging measured: the largest normwise errors against the reference (the
    device's and the CPU's own, relative to the reference's norm) and how many results it judged."""

    def __init__(self) -> None:
        self.device_error = self.cpu_error = 0.0
        self.judged = 0
        self.reference_dtype = ""

    def add(self, device: float, cpu: float, reference_dtype: torch.dtype) -> None:
        self.device_error, self.cpu_error = max(self.device_error, device), max(self.cpu_error, cpu)
        self.judged += 1
        self.reference_dtype = dtype_name(reference_dtype)

    def evidence(self) -> dict[str, Any]:
        return {"reference": self.reference_dtype, "results_judged": self.judged,
                "device_error": self.device_error, "cpu_error": self.cpu_error,
                "normwise_multiple": NORMWISE_MULTIPLE, "elementwise_multiple": ELEMENTWISE_MULTIPLE}


def three_way(actual: torch.Tensor, expected: torch.Tensor, reference: torch.Tensor, accuracy: Accuracy,
              atol: float = 0.0) -> None:
    """Raises Mismatch when the device's low-precision result (`actual`) is further from the
    high-precision `reference` than the module's multiples of the CPU's own (`expected`) allow,
    `atol` the absolute floor where the output is near zero everywhere (a gradient that sums to
    zero). Where the CPU or the reference is not finite, the device must give the CPU's value (NaN
    for NaN, infinities by sign)."""
    dtype = expected.dtype
    a, e, r = (t.detach().cpu().resolve_conj().resolve_neg().to(torch.float64) for t in (actual, expected, reference))
    if a.shape != e.shape:
        raise Mismatch(f"shape {list(a.shape)} on the device, {list(e.shape)} on the CPU", math.inf, math.inf)
    finite = torch.isfinite(r) & torch.isfinite(e)
    outside = ~finite
    if bool(outside.any()):
        a_out, e_out = a[outside], e[outside]
        if not bool(((a_out == e_out) | (a_out.isnan() & e_out.isnan())).all()):
            raise Mismatch("where the CPU's result or the reference is not finite the device's differs "
                           f"({int((~((a_out == e_out) | (a_out.isnan() & e_out.isnan()))).sum())} element(s))",
                           *errors(actual, expected))
    unit = torch.finfo(dtype).eps / 2  # the dtype's unit roundoff: one correct rounding's error, relative
    device = (a - r).abs().masked_fill_(outside, 0.0)
    device = torch.where(torch.isfinite(a) | outside, device, torch.full_like(device, math.inf))
    cpu = (e - r).abs().masked_fill_(outside, 0.0)
    magnitude = r.abs().masked_fill_(outside, 0.0)
    scale = float(magnitude.max()) if magnitude.numel() else 0.0
    near_zero = atol if scale <= atol else 0.0  # an output near zero everywhere (a gradient summing to zero)
    bound = ELEMENTWISE_MULTIPLE * torch.maximum(cpu, unit * magnitude) + unit * scale + near_zero
    norm = float(magnitude.norm())
    device_norm, cpu_norm = float(device.norm()), float(cpu.norm())
    normwise_bound = NORMWISE_MULTIPLE * max(cpu_norm, unit / 2 * norm) + near_zero * math.sqrt(device.numel())
    accuracy.add(device_norm / norm if norm else device_norm, cpu_norm / norm if norm else cpu_norm, reference.dtype)
    worst = int((device - bound).argmax()) if device.numel() else 0
    if device.numel() and (bool((device > bound).any()) or device_norm > normwise_bound):
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), device.shape)) if device.dim() else ()
        raise Mismatch(
            f"three-way at {dtype_name(dtype)} against a {dtype_name(reference.dtype)} reference: the device is "
            f"{device_norm / norm if norm else device_norm:.3g} off it normwise, the CPU {cpu_norm / norm if norm else cpu_norm:.3g} "
            f"(at most {NORMWISE_MULTIPLE:g} times the CPU's, {ELEMENTWISE_MULTIPLE:g} times at an element); at index "
            f"{index} the device is {float(device.flatten()[worst]):.3g} off where the CPU is "
            f"{float(cpu.flatten()[worst]):.3g} off (allowed {float(bound.flatten()[worst]):.3g})",
            *errors(actual, expected))


# (rtol, atol) for a whole model's output (logits, a loss, gradients) by dtype: the hf suite's and
# check-model's probe's, so that both call the same difference wrong.
MODEL_TOLERANCES = {"float32": (1.3e-4, 1e-4), "bfloat16": (3e-2, 3e-2)}


class Mismatch(Exception):
    """The device's result differs from the CPU's; max_abs/max_rel are inf when the results
    cannot be compared element by element (structure, type, shape or, without values, dtype)."""

    def __init__(self, message: str, max_abs: float, max_rel: float) -> None:
        super().__init__(message)
        self.max_abs, self.max_rel = max_abs, max_rel


def to_device(inputs: Any, device: str) -> Any:
    """`inputs` (a pytree of tensors, or an OpInfo SampleInput: anything with .transform) with
    every tensor moved to `device` as a leaf that keeps its requires_grad. A tensor that is not
    plain contiguous (a partial view, a transposed, expanded or otherwise strided one), or that
    shares its storage with another of the inputs, arrives with its sizes, strides and storage
    offset over a copy of its whole storage (one copy per storage, so tensors that share memory on
    the CPU share it on the device: out= overlapping an input stays overlapping), and with its lazy
    conjugation or negation, so the device sees the layout the CPU saw. One tensor passed in two
    places (add(x, x), cat([a, b], out=a)) arrives as one tensor. The copies are the harness's,
    not the case's: the dispatcher capture does not count them."""
    with uncounted():
        return _relocated(inputs, lambda t: t.to(device))


def own_copy(inputs: Any) -> Any:
    """`inputs` as to_device() would give them, on the CPU and over storage of their own: what a
    CPU reference runs on, so that nothing it writes (an out= resized before the op raises, an
    in-place result) reaches the device's run of the same inputs. Identity, shared storage and
    layouts are kept as to_device() keeps them. Its copies, the harness's, are not counted either."""
    with uncounted():
        return _relocated(inputs, lambda t: t.clone())


def _relocated(inputs: Any, place: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """to_device() and own_copy(): `place` copies a plain tensor (detached), or a whole storage
    as a uint8 tensor, to where it goes."""
    is_sample = not isinstance(inputs, torch.Tensor) and callable(getattr(inputs, "transform", None))
    tensors = list(_sample_tensors((inputs.input, inputs.args, inputs.kwargs))) if is_sample else \
        [t for t in pytree.tree_leaves(inputs) if isinstance(t, torch.Tensor)]
    if not tensors:
        return inputs
    storages = {id(t): _storage(t) for t in tensors if t.layout == torch.strided}
    users = Counter(key for key, _ in storages.values())
    moved_storages: dict[int, torch.Tensor] = {}
    moved_tensors: dict[int, torch.Tensor] = {}

    def move(t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or t.device.type == "meta":  # meta tensors hold no data to move
            return t
        if (seen := moved_tensors.get(id(t))) is not None:
            return seen
        key, plain = storages.get(id(t), (None, True))
        if key is not None and (not plain or users[key] > 1):
            # Move the whole storage, so the device kernel sees the strides the CPU kernel saw and
            # ops that see the storage (as_strided, set_) find the same elements.
            if (base := moved_storages.get(key)) is None:
                storage = t.untyped_storage()
                base = torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage, 0, (storage.nbytes(),))
                base = moved_storages[key] = place(base)
            moved = torch.empty(0, dtype=t.dtype, device=base.device).set_(
                base.untyped_storage(), t.storage_offset(), t.shape, t.stride())
            if t.is_conj():
                moved = moved.conj()
            if t.is_neg():
                moved = torch._neg_view(moved)
            moved = moved.detach()
        else:
            moved = place(t.detach())
        if t.requires_grad:  # a copy is a leaf that does not require grad until told
            moved.requires_grad_(True)
        moved_tensors[id(t)] = moved
        return moved

    if is_sample:
        return inputs.transform(move)
    return pytree.tree_map(move, inputs)


def _sample_tensors(value: Any) -> Iterator[torch.Tensor]:
    """The tensors a SampleInput's transform() reaches: in lists, tuples and dicts, nested (the
    walk pytree makes, for a tenth of its cost: samples are moved many times a case)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _sample_tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _sample_tensors(item)


def _storage(t: torch.Tensor) -> tuple[int, bool]:
    """What tells `t`'s storage apart from others (its address; for a storage of no bytes, which
    shares nothing, the tensor's own id negated), and whether `t` is plain: contiguous and owning
    exactly its whole storage."""
    storage = t.untyped_storage()
    nbytes = storage.nbytes()
    key = storage.data_ptr() if nbytes else -id(t)
    return key, not t.storage_offset() and nbytes == t.nbytes and t.is_contiguous()


def errors(actual: torch.Tensor, expected: torch.Tensor) -> tuple[float, float]:
    """(max abs error, max rel error) of `actual` against `expected` over the elements finite on
    both sides, complex numbers as (real, imag) pairs; (0.0, 0.0) when there are none. Raises
    Mismatch when the shapes differ."""
    if actual.shape != expected.shape:
        raise Mismatch(f"shape {list(actual.shape)} on the device, {list(expected.shape)} on the CPU",
                       math.inf, math.inf)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if a.is_complex() or e.is_complex():
        a, e = (torch.view_as_real(t.resolve_conj().to(torch.complex128)) for t in (a, e))
    a, e = a.to(torch.float64), e.to(torch.float64)
    not_finite = ~(torch.isfinite(a) & torch.isfinite(e))
    if not a.numel() or bool(not_finite.all()):
        return 0.0, 0.0
    # Elements not finite on both sides count as 0: every error is >= 0, so the maxima are those
    # over the finite elements (without gathering them: that costs more than the arithmetic).
    diff = (a - e).abs_().masked_fill_(not_finite, 0.0)
    rel = (diff / e.abs().clamp_min_(torch.finfo(torch.float64).tiny)).masked_fill_(not_finite, 0.0)
    return float(diff.max()), float(rel.max())


def _identical(a: torch.Tensor, e: torch.Tensor) -> bool:
    """Whether two CPU tensors hold the same dtype, shape and values (torch.equal), for a fast
    path that gives what assert_close and errors() would give: no mismatch, errors 0. NaN is
    never equal to itself, so results with NaN take the full comparison."""
    return (a.layout == e.layout == torch.strided and a.dtype == e.dtype and a.shape == e.shape
            and a.dtype not in _NO_FAST_PATH and not a.is_quantized and torch.equal(a, e))


# 1-byte floats (assert_close refuses a tolerance for them), complex32 (no CPU equal kernel)
_NO_FAST_PATH = {d for d in vars(torch).values() if isinstance(d, torch.dtype)
                 and ((d.is_floating_point and d.itemsize == 1) or d == torch.complex32)}


def compare(actual: Any, expected: Any, rtol: float, atol: float, values: bool = True,
            structure_only: Callable[[str], bool] | None = None, reference: Callable[[], Any] | None = None,
            accuracy: Accuracy | None = None, fixed_too: bool = False) -> tuple[float, float]:
    """Raises Mismatch when `actual` (device) differs from `expected` (CPU), pytrees of tensors and
    other values; returns the largest errors. With values=False only structure, shapes and dtypes
    are compared; `structure_only(path)` says so of single parts, by their path (keystr: `[0]`,
    `.result`), the parts whose values the CPU does not determine (random or uninitialized).
    `reference()` (made at most once, when a low-precision part is not the CPU's to the bit) gives
    the same call at high precision: such parts are judged three ways (three_way), their errors
    noted in `accuracy`; with `fixed_too` a part within rtol and atol passes as well (a reviewed
    tolerance override). The copies back to the CPU are the harness's, not the case's: the
    dispatcher capture does not count them."""
    with uncounted():
        return _compared(actual, expected, rtol, atol, values, structure_only, reference, accuracy, fixed_too)


def leaf_paths(tree: Any) -> list[str]:
    """The path of each leaf of `tree` (pytree.keystr), in tree_flatten's order."""
    return [pytree.keystr(path) for path, _ in pytree.tree_flatten_with_path(tree)[0]]


def _compared(actual: Any, expected: Any, rtol: float, atol: float, values: bool,
              structure_only: Callable[[str], bool] | None, reference: Callable[[], Any] | None = None,
              accuracy: Accuracy | None = None, fixed_too: bool = False) -> tuple[float, float]:
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        raise Mismatch(f"output structure differs: {a_spec} vs {e_spec}", math.inf, math.inf)
    paths = leaf_paths(expected) if structure_only else None  # else made when a message needs them
    references: list[Any] | None = None  # reference()'s leaves, once asked for
    max_abs = max_rel = 0.0
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(a, torch.Tensor) != isinstance(e, torch.Tensor):
            raise Mismatch(f"{_named(expected, i, paths)}expected {_kind(e)}, got {_kind(a)}", math.inf, math.inf)
        leaf_values = values and not (paths is not None and structure_only(paths[i]))
        if not isinstance(e, torch.Tensor):
            if leaf_values and a != e and not (isinstance(e, float) and math.isnan(e) and isinstance(a, float)
                                               and math.isnan(a)):
                raise Mismatch(f"{_named(expected, i, paths)}non-tensor output {a!r} != {e!r}", math.inf, math.inf)
            continue
        if not leaf_values:
            if a.shape != e.shape or a.dtype != e.dtype:
                raise Mismatch(f"{_named(expected, i, paths)}expected {dtype_name(e.dtype)}{list(e.shape)}, got "
                               f"{dtype_name(a.dtype)}{list(a.shape)}", math.inf, math.inf)
            continue
        a, e = (t.detach().cpu().resolve_conj().resolve_neg() for t in (a, e))
        if _identical(a, e):
            continue  # the common case (the device ran the CPU's kernel): no mismatch, errors 0
        abs_err, rel_err = errors(a, e)
        max_abs, max_rel = max(max_abs, abs_err), max(max_rel, rel_err)
        if reference is not None and e.dtype in LOW_PRECISION and not _within_one_step(a, e):
            if references is None:
                references = _reference_leaves(reference, e_spec)
            r = references[i] if i < len(references) else None
            if isinstance(r, torch.Tensor) and r.is_floating_point() and r.shape == e.shape:
                try:
                    three_way(a, e, r, accuracy if accuracy is not None else Accuracy(), atol)
                    continue
                except Mismatch as judged:
                    if not fixed_too:
                        raise Mismatch(f"{_named(expected, i, paths)}{judged}", judged.max_abs, judged.max_rel) from None
        exact = not (e.dtype.is_floating_point or e.dtype.is_complex)  # integers, bools, indices
        try:
            torch.testing.assert_close(a, e, rtol=0 if exact else rtol, atol=0 if exact else atol, equal_nan=True,
                                       check_device=False, check_stride=False, check_layout=False)
        except AssertionError as exc:
            raise Mismatch(f"{_named(expected, i, paths)}{'(compared exactly) ' if exact else ''}{exc}", abs_err, rel_err) from None
    return max_abs, max_rel


def _within_one_step(a: torch.Tensor, e: torch.Tensor) -> bool:
    """Whether the device's result is within one step of the dtype of the CPU's at every element
    (non-finite values equal): then its error against any reference is at most the CPU's plus
    one step, within three_way's bounds, and the reference need not be made."""
    eps = torch.finfo(e.dtype).eps
    a64, e64 = a.to(torch.float64), e.to(torch.float64)
    close = ((a64 - e64).abs() <= eps * e64.abs()) | (a64 == e64) | (a64.isnan() & e64.isnan())
    return bool(close.all())


def _reference_leaves(reference: Callable[[], Any], spec: Any) -> list[Any]:
    """The leaves of reference() where it has the result's structure; none where it has another
    or cannot be made (the call at high precision raises): then the fixed tolerance judges."""
    try:
        leaves, reference_spec = pytree.tree_flatten(reference())
    except Exception:  # noqa: BLE001 - no reference: rtol and atol decide
        return []
    return leaves if reference_spec == spec else []


def _named(tree: Any, index: int, paths: list[str] | None) -> str:
    """The prefix naming the `index`th leaf of `tree` in a message ("" for a lone tensor)."""
    path = (paths if paths is not None else leaf_paths(tree))[index]
    return f"{path}: " if path else ""


def differing_parts(first: Any, second: Any, rtol: float, atol: float) -> set[str]:
    """The paths (leaf_paths) of the parts of two results of one computation that differ: what
    the inputs do not determine when both are the CPU's own results for the same inputs.
    Everything, when their structures differ."""
    with uncounted():
        f_leaves, f_spec = pytree.tree_flatten(first)
        s_leaves, s_spec = pytree.tree_flatten(second)
        paths = leaf_paths(first)
        if f_spec != s_spec:
            return set(paths)
        differing = set()
        for path, f, s in zip(paths, f_leaves, s_leaves):
            try:
                _compared(s, f, rtol, atol, True, None)
            except Mismatch:
                differing.add(path)
        return differing


def devices_of(tree: Any) -> set[torch.device]:
    """The devices of the tensors in `tree`."""
    return {t.device for t in pytree.tree_leaves(tree) if isinstance(t, torch.Tensor)}


def _kind(value: Any) -> str:
    return "a tensor" if isinstance(value, torch.Tensor) else type(value).__name__
