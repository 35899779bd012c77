"""The fuzz suite (suites/fuzz): Hypothesis-drawn compositions of dtypes, gradients, call forms,
layouts per operand, value scales, offsets and integer extremes, edge shapes, negative dims,
argument identity, duplicate indices, list lengths and device placements over each OpInfo's
samples, after a sweep of each axis alone. At the nightly's budget it finds every planted defect of
a class it covers without being told which axis to look on, shrinks each to the transforms, form or
placement that show it (with the dtype and direction where only another dtype or the gradients
show it), replays it with `repro`, and draws the same examples again under the same seed."""

import json
import os
import subprocess
import sys

from conform_cli import REPO, cli, evidences, outcomes, suite_module

SLICE = ["--suite", "fuzz", "--ops", "^(neg|bmm|abs|add|mm)$", "--no-skiplists", "--reruns", "0", "-j", "2"]

LAYOUTS = {"noncontiguous", "permuted", "offset", "expanded"}
ONE_OPERAND = {f"{kind}:{operand}" for kind in LAYOUTS for operand in (0, 1)}  # the other operand as it was
# defects_backend's planted defect -> the chain (shrunk) that shows it, element by element (each
# element one of a set), and the property judged
PLANTED = {
    "fuzz/neg/float32/examples": ([{"noncontiguous", "permuted", "offset"}], None),  # reads as if contiguous
    "fuzz/bmm/float32/examples": ([{"expanded"}], None),  # a stride-0 operand read as laid-out batches
    "fuzz/sin/float32/examples": ([{"other_device"}], "outputs on the inputs' device"),  # no device guard
    "fuzz/atan2/float32/examples": ([{"cpu_operand"}], "refused"),  # computes with a CPU operand
    "fuzz/cat/float32/examples": ([{"out_is_input"}], "raises"),  # out= an input seen as another tensor
    "fuzz/nn.functional.layer_norm/float32/examples": ([{"shifted_2^10"}], None),  # E[x^2] - E[x]^2
    "fuzz/_foreach_add/float32/examples": ([{"length_33", "length_130"}], None),  # stops after 32 tensors
    "fuzz/floor/float32/examples": (None, "resource balance"),  # keeps a device buffer per call
    "fuzz/fmax/float32/examples": ([ONE_OPERAND], None),  # other read with self's strides
    "fuzz/expm1/float32/examples": ([{"out"}, LAYOUTS - {"expanded"}], None),  # out= written in storage order
    "fuzz/tan/float32/examples": ([{"inplace"}, LAYOUTS - {"offset", "expanded"}], None),  # self in storage order
    # writes into a self whose elements share memory, which the CPU refuses
    "fuzz/div.no_rounding_mode/float32/examples": ([{"inplace"}, {"expanded", "expanded:0"}], "raises"),
    "fuzz/minimum/float32/examples": ([{"int32"}, {"int_extremes"}], None),  # integers compared as float32
    "fuzz/cummax/float32/examples": ([{"negative_dims"}], None),  # -1 taken as the first dimension
    # the last of two writes wins (an expanded index repeats its first element: duplicates too)
    "fuzz/index_add/float32/examples": ([{"duplicate_indices", "expanded"}], None),
}
NIGHTLY = ["--suite-option", "max_examples=200", "--suite-option", "seconds_per_op=60"]
# The bundled backend holds int64 and float64 in 32 bits by default: at iinfo's ends an int64 example
# differs from the CPU in every op. Refusing them instead makes that a known failure of those
# dtypes (their plain samples fail alike), so that a planted defect is what the search finds.
REFUSE_64BIT = {"NEURONSIM_64BIT": "error"}


def test_the_fuzzer_finds_and_shrinks_each_planted_defect_of_its_axes(db):
    ops = "|".join(case.split("/")[1] for case in PLANTED) + "|abs|add"
    cli("run", "--suite", "fuzz", "--ops", f"^({ops})$", *NIGHTLY, "--no-skiplists", "--reruns", "0", "-j", "2",
        "--backend-module", "defects_backend", "--db", str(db), env=REFUSE_64BIT)
    got, evidence = outcomes(db), evidences(db)
    for case, (chains, prop) in PLANTED.items():
        found = evidence[case]
        assert got[case] == "fail", (case, got[case], found)
        if chains is not None:  # shrunk to the transforms, form, placement and dtype that show the defect
            assert len(found["chain"]) == len(chains), (case, found)
            assert all(element in allowed for element, allowed in zip(found["chain"], chains)), (case, found)
            assert found["variant"] == "+".join(found["chain"]) and isinstance(found["sample_index"], int), (case, found)
        if prop:
            assert found["property"] == prop, (case, found)
    for case in ("fuzz/neg/float32/examples", "fuzz/bmm/float32/examples"):
        found = evidence[case]
        assert "strides" in found["sample"] and "index" in found["message"]  # the first differing element
        assert found["fuzz"]["examples_run"] >= 1 and found["fuzz"]["seed"] == 0
    assert got["fuzz/abs/float32/examples"] in ("pass", "fallback"), evidence["fuzz/abs/float32/examples"]
    # add's backward reduces through the planted sum.dim_IntList, which computes on the host
    assert got["fuzz/add/float32/examples"] == "host_only", evidence["fuzz/add/float32/examples"]
    # replayed: the same search finds the same shrunk example
    replay = cli("repro", "fuzz/bmm/float32/examples", "--db", str(db), check=False, env=REFUSE_64BIT)
    assert replay.returncode == 1
    replayed = json.loads(replay.stdout[replay.stdout.index("{\n"):])
    assert replayed["evidence"]["chain"] == evidence["fuzz/bmm/float32/examples"]["chain"]


# torch.testing's default (rtol, atol) by dtype, (0, 0) for the others (integers, bool): the
# tolerance an example drawn at that dtype is judged with
DEFAULT_TOLERANCES = {"float32": (1.3e-06, 1e-05), "float64": (1e-07, 1e-07), "bfloat16": (0.016, 1e-05),
                      "float16": (0.001, 1e-05)}
AXES_SLICE = ["--suite", "fuzz", "--ops", r"^(sign|nn\.functional\.silu)$", *NIGHTLY, "--no-skiplists", "--reruns", "0",
              "-j", "2"]


def test_the_fuzzer_draws_dtypes_and_gradients_to_find_what_only_they_show(db):
    """defects_backend's sign has no device guard at any dtype but float32 (the case's own), its
    silu_backward allocates on device 0 while silu is right: neither shows in the ops suite's
    forward and backward checks (the main device only) nor at the case's own dtype, forward. Each
    is found on the float32 case, shrunk to the dtype or `backward` with `other_device`, judged at
    the drawn dtype's tolerance, and replayed by `repro`; the real backend passes the same slice."""
    cli("run", *AXES_SLICE, "--backend-module", "defects_backend", "--db", str(db), env=REFUSE_64BIT)
    got, evidence = outcomes(db), evidences(db)
    sign, silu = evidence["fuzz/sign/float32/examples"], evidence["fuzz/nn.functional.silu/float32/examples"]
    assert got["fuzz/sign/float32/examples"] == "fail" and sign["property"] == "outputs on the inputs' device", sign
    dtype, placement = sign["chain"]
    assert dtype != "float32" and placement == "other_device" and sign["variant"] == f"{dtype}+other_device", sign
    assert sign["sample"].startswith(f"({dtype}["), sign  # the sample generated at the drawn dtype
    assert sign["tolerance_source"] == "torch.testing default", sign  # sign declares no tolerance of its own
    assert (sign["rtol"], sign["atol"]) == DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0)), sign
    # autograd refuses a gradient on another device than its input's
    assert got["fuzz/nn.functional.silu/float32/examples"] == "error", silu
    assert silu["chain"] == ["other_device", "backward"] and silu["variant"] == "other_device+backward", silu
    assert "device" in silu["message"], silu
    replay = cli("repro", "fuzz/sign/float32/examples", "--db", str(db), check=False, env=REFUSE_64BIT)
    assert replay.returncode == 1
    assert json.loads(replay.stdout[replay.stdout.index("{\n"):])["evidence"]["chain"] == sign["chain"]
    cli("run", *AXES_SLICE, "--db", str(db), env=REFUSE_64BIT)
    got, evidence = outcomes(db), evidences(db, "latest")
    assert set(got.values()) <= {"pass", "fallback"}, {c: evidence[c].get("message") for c in got}
    for case, found in evidence.items():  # both axes drawn
        fuzz = found["fuzz"]
        assert len(fuzz["dtypes_drawn"]) > 2 and fuzz["directions_drawn"]["backward"] > 0, (case, fuzz)


def test_the_real_backend_passes_and_the_same_seed_draws_the_same_examples(db):
    cli("run", *SLICE, "--db", str(db), env=REFUSE_64BIT)
    first, got = evidences(db), outcomes(db)
    assert set(got.values()) <= {"pass", "fallback"}, {c: first[c].get("message") for c in got}
    for case, found in first.items():
        fuzz = found["fuzz"]
        # every example drawn ran (one that failed where the ops suite's check fails too ran again at the
        # case's own dtype, forward: counted twice)
        assert fuzz["examples_run"] >= fuzz["max_examples"] == 25 and not fuzz["budget_exhausted"], (case, fuzz)
    drawn = first["fuzz/add/float32/examples"]["fuzz"]["transforms_drawn"]
    assert sum(drawn.values()) > 0 and {"cpu_operand", "other_device"} & set(drawn), drawn  # placements too
    assert len(first["fuzz/add/float32/examples"]["fuzz"]["dtypes_drawn"]) > 1  # other dtypes too
    assert first["fuzz/add/float32/examples"]["fuzz"]["directions_drawn"]["backward"] > 0  # and gradients

    def draws(found: dict) -> dict:
        return {c: {k: v for k, v in f["fuzz"].items() if k.endswith("_drawn")} for c, f in found.items()}
    cli("run", *SLICE, "--db", str(db), env=REFUSE_64BIT)
    assert draws(evidences(db)) == draws(first)
    cli("run", *SLICE, "--seed", "7", "--db", str(db), env=REFUSE_64BIT)
    assert draws(evidences(db)) != draws(first)


def test_a_bad_budget_is_refused_before_any_case_runs(db):
    bad = cli("run", "--suite", "fuzz", "--suite-option", "seconds_per_op=0", "--db", str(db), check=False)
    assert bad.returncode == 2 and "seconds_per_op" in bad.stderr and "positive" in bad.stderr


def test_an_example_that_does_not_fail_again_is_an_error_that_keeps_what_it_showed(db):
    """defects_backend's log1p is wrong on its first call in a worker only (as an executable whose
    first run differs from its cached one's): the example that showed it passes when replayed, so
    the case is an error, never a pass, and its evidence keeps what that first call showed."""
    cli("run", "--suite", "fuzz", "--ops", "^log1p$", "--dtypes", "float32", "--no-skiplists", "--reruns", "0",
        "-j", "1", "--backend-module", "defects_backend", "--db", str(db), env=REFUSE_64BIT)
    found = evidences(db)["fuzz/log1p/float32/examples"]
    assert outcomes(db)["fuzz/log1p/float32/examples"] == "error", found
    assert "did not fail again when replayed" in found["message"]
    first = found["first_call"]
    assert first["outcome"] == "fail" and "Mismatched elements" in first["message"], first
    assert first["max_abs_error"] > 0.5 and isinstance(first["sample"], str), first


def test_tiny_inputs_are_judged_with_a_tolerance_as_tiny():
    # The atol shrinks with the scaling: a flushed-to-zero result of a 2^-24 input is ~1e-7 off,
    # inside a fixed atol of 1e-5.
    fuzz = suite_module("fuzz")
    assert fuzz.atol_scale(["scaled_2^-24", "noncontiguous"]) == 2.0 ** -24
    assert fuzz.atol_scale(["scaled_2^-8", "scaled_2^-8"]) == 2.0 ** -16
    assert fuzz.atol_scale(["scaled_2^24", "shifted_2^10"]) == 1.0  # larger magnitudes: rtol's business


FLUSHED = """
import torch, defects_backend, suite_api
suite_api.load_suite("fuzz")
import importlib
fuzz = importlib.import_module("neuron_conform_suites.fuzz.suite")
from suitelib.opinfo import judge
from case_context import Context
case = judge.Case(fuzz.infos()["atan"], torch.float32, Context(defects_backend, "neuron", 0))
setting = fuzz.Setting(case, torch.float32, False)
for scale in (1.0, fuzz.atol_scale(["scaled_2^-24"])):
    tiny, _ = setting.transforms.apply("scaled_2^-24", setting.samples[0], 0)
    try:
        with case.atol_scaled(scale):
            fuzz._judge(case, setting, 0, ["scaled_2^-24"], tiny, "device", 0)
        print("pass")
    except fuzz.Verdict as verdict:
        print("fail", verdict.evidence["atol"], verdict.evidence["atol_scaled_by"])
"""


def test_a_kernel_that_flushes_tiny_results_to_zero_fails_only_under_the_scaled_atol():
    # defects_backend's atan returns 0 below 2^-20: at inputs scaled by 2^-24 its results are ~1e-7
    # off, inside a fixed atol of 1e-5 (what the fuzzer once judged with), outside the scaled one.
    # In a process of its own: the planted kernels must not reach this one's other tests.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "harness" / "worker"), str(REPO / "harness" / "tests")])}
    ran = subprocess.run([sys.executable, "-c", FLUSHED], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    fixed, scaled = ran.stdout.split("\n")[:2]
    assert fixed == "pass"
    assert scaled.startswith("fail ") and 2.0 ** -24 <= float(scaled.split()[2]) < 2.0 ** -16, scaled


def test_the_scaled_atol_follows_the_magnitude_of_the_results():
    """Under a scaling of the inputs by 2^-24 the atol shrinks as far as the CPU's results do:
    tiny results get a tiny atol, a softmax's (about 0.2 whatever the scale) keeps one in
    proportion, large ones keep the case's own."""
    import pytest
    import torch

    fuzz = suite_module("fuzz")
    from suitelib.opinfo import judge

    case = judge.Case(fuzz.infos()["softmax"], torch.float32, None)
    own = case.atol
    with case.atol_scaled(2.0 ** -24):
        case._scaled_atol(torch.full((5,), 0.2))
        assert case.atol == pytest.approx(own * 0.2)
        case._scaled_atol(torch.full((5,), 1e-9))
        assert case.atol == own * 2.0 ** -24
        case._scaled_atol((torch.full((3,), 1e-9), torch.tensor([40.0, 1.0])))
        assert case.atol == own
    assert case.atol == own


def test_an_example_at_a_known_failing_setting_is_judged_against_that_failure():
    """At a dtype and direction where the ops suite's check fails, an example failing the same way
    (outcome, exception type, and the first failing op or, a dtype refused in whichever op comes
    first, its message with the op named out) is the known failure; failing otherwise is news."""
    fuzz = suite_module("fuzz")
    refused = "complex128 is not supported on this device: it has no complex arithmetic."
    known = {"outcome": "error", "exception_type": "NotImplementedError", "failing_op": "aten::mul.Scalar",
             "message": f"aten::mul.Scalar: {refused}"}

    def fails(outcome: str, exception: str | None, op: str | None, message: str) -> bool:
        return fuzz._fails_as(known, fuzz.Verdict(outcome, {"exception_type": exception, "failing_op": op,
                                                            "message": message}))
    assert fails("error", "NotImplementedError", "aten::add.Scalar", f"aten::add.Scalar: {refused}\nmore")
    assert fails("error", "NotImplementedError", "aten::mul.out", "out= refused otherwise")  # the op, another overload
    assert not fails("fail", None, None, "Tensor-likes are not close!")  # a wrong value is news here
    assert not fails("error", "RuntimeError", "aten::mul.Scalar", f"aten::mul.Scalar: {refused}")
    assert not fails("error", "NotImplementedError", "aten::add.Scalar", "aten::add.Scalar: int4 is not supported")
    wrong = {"outcome": "fail", "exception_type": None, "failing_op": None, "message": "Tensor-likes are not close!"}
    assert fuzz._fails_as(wrong, fuzz.Verdict("fail", {"message": "Tensor-likes are not close! elsewhere"}))


def test_transforms_make_the_inputs_they_name_and_none_whose_result_is_undefined():
    """Integer extremes at iinfo's ends (no -1 beside them: iinfo.min / -1 traps the CPU), negative
    dims counted from the end, each index twice, and no duplicate where the op writes one of two
    values PyTorch leaves undefined (index_copy, index_put without accumulate)."""
    import torch

    transforms = suite_module("fuzz", "transforms")
    extreme = transforms._extremes(torch.int32)
    made = extreme(torch.tensor([5, -1, 7, 3, -1, 2], dtype=torch.int32))
    info = torch.iinfo(torch.int32)
    assert made.tolist() == [info.min, -2, info.max, info.min, -2, info.max]
    assert extreme(torch.tensor([4, -1])).tolist() == [4, -2]  # an int64 divisor among int32 operands
    assert extreme(torch.tensor([1.0, -1.0])) is None
    assert transforms._extremes(torch.uint64)(torch.zeros(3, dtype=torch.uint64)).view(torch.int64).tolist() == [0, 0, -1]

    ops = suite_module("fuzz").infos()
    from suitelib.opinfo import judge, samples

    def first(name: str, dtype=torch.float32, where=lambda s: True):
        return next(s for s in samples.generated(ops[name], dtype, reference=False) if where(s))

    cumsum = first("cumsum", where=lambda s: s.input.dim() == 3 and s.args == (1,))
    assert transforms._negative_dims(ops["cumsum"], cumsum).args == (-2,)
    flip = first("flip", where=lambda s: s.kwargs.get("dims") == (0, 1, 2))
    assert transforms._negative_dims(ops["flip"], flip).kwargs["dims"] == (-3, -2, -1)

    def setting(name: str):
        op = ops[name]
        return transforms.Transforms(judge.Case(op, torch.float32, None), torch.float32, [], lambda s: None)

    index_add = first("index_add", where=lambda s: s.args[1].numel() == 5)
    duplicated, named = setting("index_add").apply("duplicate_indices", index_add, 0)
    index = duplicated.args[1].tolist()
    assert named == "duplicate_indices" and index[1::2] == index[0::2][:len(index[1::2])] and len(set(index)) < 5
    assert setting("index_copy").apply("duplicate_indices", first("index_copy"), 0) is None
    put = setting("index_put")
    assert put.apply("duplicate_indices", first("index_put", where=lambda s: not s.kwargs["accumulate"]), 0) is None
    assert put.apply("duplicate_indices", first("index_put", where=lambda s: s.kwargs["accumulate"]), 0) is not None


def test_the_time_budget_counts_run_time_not_compile_time(db):
    """On a device that compiles each new signature for seconds, the budget is the search's run
    time: at 0.4 s a compile and a 1 s budget, abs's 25 examples (dozens of new signatures) all run."""
    cli("run", "--suite", "fuzz", "--ops", "^abs$", "--no-skiplists", "--reruns", "0", "--suite-option",
        "seconds_per_op=1", "--db", str(db), env={**REFUSE_64BIT, "NEURONSIM_COMPILE_LATENCY": "0.4",
                                                  "NEURONSIM_CACHE_DIR": str(db.parent / "compile-cache")})
    found = evidences(db)["fuzz/abs/float32/examples"]
    assert found["fuzz"]["examples_run"] >= 25 and not found["fuzz"]["budget_exhausted"], found["fuzz"]
    assert found["compile_cache"]["compile_seconds"] > 2, found["compile_cache"]  # the budget, twice over
