"""The sizes suite catches tiling bugs the OpInfo samples never reach (suites/sizes/planted.py: a
sum that drops its last partial chunk above 2048 elements, an mm that leaves out its last
contraction tile above K = 256), passes the real backend on the same slice, records its
tolerance evidence, and keeps a case under its memory bound."""

from conform_cli import EVERY_RUN, cli, evidences, outcomes

TILES = ["--suite", "sizes", "--ops", "^(sum|mm|matmul)$", "--checks", "tile128,tile512,tile4096",
         "--no-skiplists", "--reruns", "0", "-j", "2"]
SAMPLES = ["--suite", "ops", "--ops", "^(sum|mm|matmul)$", "--checks", "forward", "--dtypes", "float32,bfloat16",
           "--no-skiplists", "--reruns", "0", "-j", "2"]
PLANTED = ["--backend-module", "defects_backend"]  # with PLANTED_TILES: suites/sizes/planted.py
PLANTED_TILES = {"DEFECTS_CLASSES": "drops_last_chunk,drops_last_k_tile"}


def _outcomes(db, prefix: str) -> dict[str, str]:
    return {case: o for case, o in outcomes(db, EVERY_RUN).items() if case.startswith(prefix)}


def test_partial_tile_bugs_fail_their_sizes_cases_and_pass_the_samples(db):
    cli("run", *TILES, *PLANTED, "--db", str(db), check=False, env=PLANTED_TILES)
    cli("run", *SAMPLES, *PLANTED, "--db", str(db), env=PLANTED_TILES)
    sizes, ops, evidence = _outcomes(db, "sizes/"), _outcomes(db, "ops/"), evidences(db)
    for dtype in ("float32", "bfloat16"):
        # the sum's bug starts above 2048 elements: tile4096 only
        assert sizes[f"sizes/sum/{dtype}/tile4096"] == "fail"
        # the planted sum computes on the host: right below its tile, host-only
        assert sizes[f"sizes/sum/{dtype}/tile128"] == sizes[f"sizes/sum/{dtype}/tile512"] == "host_only"
        # the mm's above K = 256, through mm and through matmul
        for op in ("mm", "matmul"):
            assert sizes[f"sizes/{op}/{dtype}/tile512"] == sizes[f"sizes/{op}/{dtype}/tile4096"] == "fail"
            assert sizes[f"sizes/{op}/{dtype}/tile128"] == "host_only"  # the planted kernel, right below its tile
    assert set(ops.values()) <= {"host_only"}, ops  # the samples never reach the bugs (the kernels compute on the host)
    mm = evidence["sizes/mm/float32/tile512"]
    assert mm["variant"].startswith("K=") and mm["tolerance_ratio"] > 1 and "exceeds its bound" in mm["message"]
    assert evidence["sizes/sum/bfloat16/tile4096"]["variant"] == "x=4095 contiguous"


def test_the_real_backend_passes_with_its_tolerance_recorded(db):
    cli("run", *TILES, "--db", str(db))
    sizes, evidence = _outcomes(db, "sizes/"), evidences(db)
    assert len(sizes) == 18 and set(sizes.values()) <= {"pass", "fallback"}, sizes
    mm = evidence["sizes/mm/float32/tile4096"]
    assert mm["reference_dtype"] == "float64" and "sqrt(K)" in mm["tolerance_formula"]
    assert 0 <= mm["tolerance_ratio"] <= 1 and mm["calls"]["K=4097 transposed"]["K"] == 4097
    assert set(mm["calls"]) >= {f"{axis}={n} {layout}" for axis in "MKN" for n in (4095, 4096, 4097)
                                for layout in ("contiguous", "transposed")}


def test_a_model_case_stays_under_its_memory_bound(db):
    limit = 64 * 2**20
    cli("run", "--suite", "sizes", "--ops", r"^GPT-2\.lm_head$", "--dtypes", "float32", "--checks", "seq1",
        "--suite-option", f"max_case_memory={limit}", "--no-skiplists", "--reruns", "0", "--db", str(db))
    evidence = evidences(db)["sizes/GPT-2.lm_head/float32/seq1"]
    assert evidence["max_case_memory"] == limit
    assert evidence["reduced"][0].startswith("lm_head: vocab 50257 -> ")
    assert 0 < evidence["estimated_memory"] <= limit and 0 < evidence["peak_device_memory"] <= limit
    assert evidence["architecture"] == "GPT2LMHeadModel"


def test_a_bad_memory_bound_stops_the_run_before_any_case(db):
    result = cli("run", "--suite", "sizes", "--suite-option", "max_case_memory=lots", "--db", str(db), check=False)
    assert result.returncode == 2 and "max_case_memory='lots'" in result.stderr
    result = cli("run", "--suite", "sizes", "--suite-option", "max_case_memory", "--db", str(db), check=False)
    assert result.returncode != 0 and "expects NAME=VALUE, got 'max_case_memory'" in result.stderr


def test_the_device_cache_is_given_back_before_the_cpu_reference_runs():
    """On an emulated device the cached blocks are host memory: the largest cases' float64
    reference ran out of it in a worker whose cache still held an earlier case's blocks."""
    import torch

    from conform_cli import suite_module

    sizes_calls = suite_module("sizes", "sizes_calls")
    events: list[str] = []

    def mm(a, b):
        events.append("device" if not events else "cpu")
        return torch.mm(a, b)

    class Device:  # the device module's memory API, as torch.neuron and torch.cuda have it
        def reset_peak_memory_stats(self):
            pass

        def max_memory_allocated(self):
            return 0

        def empty_cache(self):
            events.append("empty_cache")

    measured = sizes_calls.run(sizes_calls.Call("mm", mm, [(8, 4), (4, 8)], k=4), torch.float32, "cpu", 0, Device())
    assert events == ["device", "empty_cache", "cpu", "cpu"]  # the device call, then the reference and the CPU's
    assert measured["K"] == 4
