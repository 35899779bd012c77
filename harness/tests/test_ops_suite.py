"""The ops suite's own rules: what it compares, and how samples reach the device."""

import json
import re

import pytest

from conform_cli import cli, evidences, outcomes, suite_module


def opinfo_library():
    """The library the ops suite's checks are made of (harness/worker/suitelib/opinfo/), its
    modules importable as the worker has them."""
    suite_module("ops")
    import suitelib.opinfo

    return suitelib.opinfo


def test_values_the_cpu_does_not_determine_are_unverified_and_the_rest_compared(db):
    # torch.empty's values are whatever memory held, on both sides: shapes and dtypes must match,
    # the evidence says which results went uncompared, and the case is unverified, never a pass.
    # Upstream's skip of the comparison does not excuse anything by itself: embedding's and
    # conv3d's values are compared (the CPU reproduces them), only empty's are not.
    import torch

    opinfo = opinfo_library()
    from comparison import Mismatch, compare
    from suitelib.opinfo import tolerances

    ops = opinfo.by_subject()
    assert tolerances.values_not_comparable(ops["empty"], torch.float32) == "output is non-deterministic"
    assert tolerances.values_not_comparable(ops["add"], torch.float32) is None
    garbage, other = torch.full((2, 3), 7.0), torch.zeros(2, 3)
    with pytest.raises(Mismatch):
        compare(garbage, other, rtol=0, atol=0)
    assert compare(garbage, other, rtol=0, atol=0, values=False) == (0.0, 0.0)
    with pytest.raises(Mismatch, match=r"expected float32\[2, 3\], got float32\[3, 2\]"):
        compare(torch.zeros(3, 2), other, rtol=0, atol=0, values=False)
    cli("run", "--ops", "^(empty|add|nn.functional.embedding)$", "--dtypes", "float32", "--checks", "forward", "--no-skiplists",
        "--db", str(db), "--timeout", "60")
    got, evidence = outcomes(db), evidences(db)
    assert got["ops/empty/float32/forward"] == "unverified", evidence["ops/empty/float32/forward"]
    assert got["ops/add/float32/forward"] in ("pass", "fallback")
    assert got["ops/nn.functional.embedding/float32/forward"] in ("pass", "fallback")
    unseen = evidence["ops/empty/float32/forward"]["values_not_compared"]
    assert unseen["results"] >= 1 and unseen["first"]["parts"] == [".result"], unseen
    assert "values_not_compared" not in evidence["ops/add/float32/forward"]
    assert "values_not_compared" not in evidence["ops/nn.functional.embedding/float32/forward"]


def test_a_cpu_result_in_uninitialized_memory_is_found_even_when_a_rerun_gets_the_same_bytes():
    # Whether the CPU's result is reproducible is asked by running it again. A plain rerun often
    # gets the same bytes back (a freed block reused, or fresh zero pages from the system), agrees
    # by chance, and the device is failed on values nobody defined; the fuzzer's replay of that
    # example then passes, and the case is an error. The rerun's new memory is poisoned instead.
    import torch
    import torch_neuronsim  # noqa: F401  (registers the device)

    opinfo = opinfo_library()
    from case_context import Context
    from sides import Verdict, uninitialized_memory_poisoned
    from suitelib.opinfo import judge
    from torch.testing._internal.opinfo.core import SampleInput

    with uninitialized_memory_poisoned():
        assert torch.empty(3).isnan().all() and (torch.empty(2, dtype=torch.int64) == 2**63 - 1).all()
    assert not torch.are_deterministic_algorithms_enabled()  # as it was before

    stale = torch.full((1024,), 7.0)  # what the memory held: the first run's result

    def uninitialized(sample):
        # a kernel that leaves its output unwritten, rerun where the allocator hands back the first
        # run's block: the same bytes again, unless new memory is poisoned
        out = torch.empty(1024)
        return out if out.isnan().all() else stale.clone()

    expected = uninitialized(None)
    case = judge.Case(opinfo.by_subject()["add"], torch.float32, Context(torch_neuronsim, "cpu", 0))
    sample = SampleInput(torch.zeros(1))
    case.compare(torch.ones(1024), expected, {"variant": "sample"}, again=case.again(uninitialized, sample))
    assert case.values_not_compared and case.unverified(case.evidence)
    assert "random or uninitialized" in case.evidence["values_not_compared"]["why"]
    # a CPU result that is reproducible still fails the device, and so do the parts of a result
    # the CPU reproduces beside one it does not
    with pytest.raises(Verdict):
        case.compare(torch.ones(1024), expected, {"variant": "sample"},
                     again=case.again(lambda s: torch.full((1024,), 7.0), sample))
    with pytest.raises(Verdict) as raised:
        case.compare((torch.ones(1024), torch.zeros(2)), (expected, torch.ones(2)), {"variant": "sample"},
                     again=case.again(lambda s: (uninitialized(s), torch.ones(2)), sample))
    assert raised.value.evidence["message"].startswith("[1]: "), raised.value.evidence


def test_partial_views_keep_their_storage_on_the_device(db):
    # as_strided over a view with a storage offset reads elements outside the view: moving only
    # the view's elements to the device would compare different data.
    cli("run", "--ops", "^as_strided.partial_views$", "--dtypes", "float32", "--checks", "forward,backward",
        "--no-skiplists", "--db", str(db), "--timeout", "60")
    assert set(outcomes(db).values()) <= {"pass", "fallback"}


def _leaves(sample):
    import torch.utils._pytree as pytree

    return pytree.tree_leaves([sample.input, sample.args, sample.kwargs])


def _same(a, b):
    import torch

    la, lb = _leaves(a), _leaves(b)
    return len(la) == len(lb) and all(
        (x.shape, x.stride(), x.dtype) == (y.shape, y.stride(), y.dtype) and torch.equal(x.nan_to_num(), y.nan_to_num())
        if isinstance(x, torch.Tensor) else x == y for x, y in zip(la, lb))


def test_samples_are_upstreams_and_each_has_its_noncontiguous_variant():
    # The suite generates op.reference_inputs itself (cheaper, same seeds, same samples) and leaves
    # out upstream's non-contiguous twins, because it runs every sample non-contiguously itself.
    import torch

    opinfo = opinfo_library()
    from suitelib.opinfo import samples

    neg = opinfo.by_subject()["neg"]
    upstream = list(neg.reference_inputs("cpu", torch.float32))
    ours = samples.generated(neg, torch.float32, reference=True)
    assert len(ours) < len(upstream)
    variants = [v for v in map(samples.noncontiguous, ours) if v is not None]
    for sample in upstream:  # every upstream sample is run: as generated, or as one's variant
        assert any(_same(sample, s) for s in ours) or any(_same(sample, v) for v in variants), samples.describe(sample)
    nc = samples.noncontiguous(ours[0])
    assert not nc.input.is_contiguous() and torch.equal(nc.input, ours[0].input)
    # an OpInfo without reference inputs: exactly its sample inputs
    total = opinfo.by_subject()["sum"]
    assert all(_same(a, b) for a, b in zip(total.sample_inputs("cpu", torch.float32),
                                           samples.generated(total, torch.float32, reference=True)))


def test_a_fact_that_changes_nothing_is_stale(monkeypatch):
    """A reviewed fact must change what a check does for an OpInfo it names. Every kind of fact has
    a check that finds one stale (each a reviewed document, which `skiplist lint` reads): a fact of
    each kind that changes nothing, planted beside the shipped ones, is refused by its check naming
    the file, the OpInfo, the kind and why; the shipped facts pass every check."""
    random, layout = suite_module("ops", "ops_random"), suite_module("ops", "ops_layout")
    transforms = suite_module("fuzz", "transforms")
    from suitelib.opinfo import facts, placements, samples

    planted = [  # (the check, the OpInfo, the kind, a fact of it that changes nothing, what the check says)
        (random.not_random_facts, "add", "not_random", {}, "the random check's rule does not select it"),
        (layout.keeps_memory_format_facts, "add", "keeps_memory_format", {}, "it is pointwise"),
        (transforms.slow_on_cpu_facts, "add", "slow_on_cpu", {"dtypes": ["float32"], "transforms": ["scaled_2^99"]},
         "it names a transform this suite does not make"),
        (samples.cpu_arguments_facts, "add", "cpu_arguments", {"positions": [7]}, "no sample of it holds a tensor"),
        (samples.undefined_on_cpu_facts, "add", "undefined_on_cpu", {"variants": ["index_out_of_range"]},
         "no sample of it makes one of its variants"),
        (transforms.undefined_on_cpu_facts, "add", "undefined_on_cpu", {"variants": ["upside_down"]},
         "it names a variant no check makes"),
        *((placements.may_take_another_device_facts, op, "may_take_another_device", {},
           "it is a _foreach_ op, or no sample of it has two non-empty operands") for op in
          ("_foreach_add", "nn.functional.relu")),
    ]
    assert {kind for _, _, kind, _, _ in planted} == set(facts.KINDS)  # a new kind needs its staleness check
    shipped = facts._records()
    for check, _, _, _, _ in planted:
        check.cache_clear()
        assert check() is not None  # the shipped facts apply
    for check, op, kind, fact, says in planted:
        monkeypatch.setattr(facts, "_records", lambda: {**shipped, op: {kind: {**fact, "reason": "r"}}})
        check.cache_clear()
        with pytest.raises(ValueError) as refused:
            check()
        assert f"{facts.FILE}: {op}/{kind}: {says}" in str(refused.value) and "(stale)" in str(refused.value)
        check.cache_clear()


def test_a_reviewed_fact_is_read_only_with_a_known_opinfo_kind_fields_and_reason(tmp_path):
    """facts.json: what the suites know about a named OpInfo, as data; a record the reader cannot
    trust stops the listing, naming the file, the OpInfo and what is wrong."""
    suite_module("ops")
    from suitelib.opinfo import facts

    known = {"tensor_split", "polygamma"}
    path = tmp_path / "facts.json"
    good = {"tensor_split": {"cpu_arguments": {"positions": [0], "reason": "expected on cpu"}}}
    path.write_text(json.dumps({"description": "", "ops": good}))
    assert facts.read(path, known) == good
    for ops, problem in (({"tensor_splitt": {"not_random": {"reason": "x"}}}, "tensor_splitt: no OpInfo"),
                         ({"polygamma": {"slow": {"reason": "x"}}}, "polygamma: unknown fact 'slow'"),
                         ({"polygamma": {"not_random": {"reason": " "}}}, "polygamma/not_random: a fact needs"),
                         ({"polygamma": {"slow_on_cpu": {"dtypes": ["float64"], "reason": "x"}}},
                          "polygamma/slow_on_cpu: expected the fields dtypes, reason, transforms"),
                         ({"tensor_split": {"cpu_arguments": {"positions": 0, "reason": "x"}}},
                          "tensor_split/cpu_arguments: positions must be a non-empty list")):
        path.write_text(json.dumps({"description": "", "ops": ops}))
        with pytest.raises(ValueError, match=re.escape(f"{path}: {problem}")):
            facts.read(path, known)
    # the shipped file, as the suites read it, against the installed torch's op_db
    assert facts.named("cpu_arguments") == {"tensor_split": facts.named("cpu_arguments")["tensor_split"]}


def test_the_reviewed_tables_of_the_axes_name_real_opinfos():
    """A table naming an OpInfo that does not exist (renamed upstream, misspelt) silently applies
    to nothing: each must name OpInfos of the installed torch."""
    tables = {
        "ops_invariance.RELATIONS": suite_module("ops", "ops_invariance").RELATIONS,
        "ops_random.CONTRACTS": suite_module("ops", "ops_random").CONTRACTS,
    }
    from suitelib import opinfo  # importable once suite_module() has imported a suite
    from suitelib.opinfo import facts

    assert facts.named("may_take_another_device")  # facts.json, checked against op_db as it is read

    subjects = set(opinfo.by_subject())
    for name, table in tables.items():
        assert set(table) <= subjects, (name, sorted(set(table) - subjects))


def test_the_harness_s_work_on_the_cpu_does_not_pass_through_the_capture():
    # Each op the dispatcher capture sees is a call into Python. Making samples and their layout,
    # edge, extremal and invalid variants, out= tensors and the CPU's own copies is the harness's
    # CPU work: nothing there is counted, and none of it may pass through the capture (it was once
    # five of every six calls the capture saw, a fifth of the suite's time). The CPU's run of an
    # input whose validity it decides (Case.alike) stays under it, as the device's run does.
    import torch
    import torch_neuronsim  # noqa: F401  (registers the device)

    suite = suite_module("ops").SUITE
    from case_context import Context
    from dispatch_capture import Capture, _on_device

    class Counting(Capture):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            device = _on_device(args, self.device_type) or bool(kwargs) and _on_device(kwargs.values(),
                                                                                       self.device_type)
            self.calls["device" if device else "elsewhere"] += 1
            return super().__torch_dispatch__(func, types, args, kwargs)

    device = torch._C._get_privateuse1_backend_name()
    ctx = Context(torch_neuronsim, device, 0)
    ctx.capture = Counting(device)
    ctx.capture.calls = {"device": 0, "elsewhere": 0}
    for check in ("forward", "backward", "extremal", "out", "inplace", "errors", "gradgrad"):
        with ctx.capture:
            outcome, evidence = suite.run_case(f"ops/atan2/float32/{check}", ctx)
        assert outcome in ("pass", "fallback"), f"{check}: {evidence}"
    calls = ctx.capture.calls
    assert calls["device"] > 1000  # the cases ran on the device, and the capture saw them
    assert calls["elsewhere"] < calls["device"] / 10, calls
