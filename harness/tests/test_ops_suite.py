"""The ops suite's own rules: what it compares, and how samples reach the device."""

import json

from conform_cli import cli, outcomes, query


def test_uninitialized_outputs_compare_shapes_only_and_say_so(db):
    # torch.empty's values are garbage on both sides; upstream skips comparing them, so do we,
    # but shapes and dtypes still must match and the evidence says values were not compared.
    cli("run", "--ops", "^(empty|add)$", "--dtypes", "float32", "--checks", "forward", "--no-skiplists",
        "--db", str(db), "--timeout", "60")
    assert outcomes(db) == {"ops/empty/float32/forward": "pass", "ops/add/float32/forward": "pass"}
    evidence = {case: json.loads(e) for case, e in query(db, "SELECT case_id, evidence FROM results")}
    assert "output is non-deterministic" in evidence["ops/empty/float32/forward"]["values_not_compared"]
    assert "values_not_compared" not in evidence["ops/add/float32/forward"]


def test_partial_views_keep_their_storage_on_the_device(db):
    # as_strided over a view with a storage offset reads elements outside the view: moving only
    # the view's elements to the device would compare different data.
    cli("run", "--ops", "^as_strided.partial_views$", "--dtypes", "float32", "--checks", "forward,backward",
        "--no-skiplists", "--db", str(db), "--timeout", "60")
    assert set(outcomes(db).values()) <= {"pass", "fallback"}
