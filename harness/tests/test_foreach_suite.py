"""The foreach suite (suites/foreach): upstream's _foreach_* OpInfos at list lengths up to 130
tensors. A kernel that stops after the first chunk of a list is caught at the first length past
the chunk, naming the first tensor it left wrong; the real backend passes the same slice."""

from conform_cli import cli, evidences, outcomes

SLICE = ["--suite", "foreach", "--ops", "^(_foreach_add|_foreach_sub|_foreach_sqrt|_foreach_norm)$", "--dtypes",
         "float32", "--no-skiplists", "--reruns", "0", "-j", "2"]


def test_a_foreach_kernel_that_stops_after_a_chunk_is_caught_past_the_chunk(db):
    cli("run", *SLICE, "--backend-module", "defects_backend", "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    for case in ("foreach/_foreach_add/float32/outplace", "foreach/_foreach_add/float32/inplace"):
        found = evidence[case]
        assert got[case] == "fail", (case, found)
        assert found["variant"] == "length 33", found  # 1 and 3 tensors pass: the chunk is 32
        assert found["first_wrong_tensor"] == 32, found
    others = {case: outcome for case, outcome in got.items() if "_foreach_add/" not in case}
    assert others and set(others.values()) <= {"pass", "fallback"}, others


def test_the_slice_passes_on_the_real_backend_at_every_length(db):
    cli("run", *SLICE, "--db", str(db))
    got, evidence = outcomes(db), evidences(db)
    assert set(got) >= {"foreach/_foreach_add/float32/outplace", "foreach/_foreach_add/float32/inplace",
                        "foreach/_foreach_norm/float32/outplace"}
    assert "foreach/_foreach_norm/float32/inplace" not in got  # a reduction has no in-place variant
    assert set(got.values()) <= {"pass", "fallback"}, got
    for case, found in evidence.items():
        assert found["lengths"] == [1, 3, 33, 130, 0], (case, found)  # 0: the empty list, refused as the CPU refuses it
        assert found["variants_compared"] == 8 and found["errors_matched"] == 1, (case, found)
