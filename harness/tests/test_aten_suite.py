"""The aten suite (suites/aten/): overloads no OpInfo reaches, called with inputs recorded from
the OpInfo samples' CPU runs. On the bundled backend a slice of one case per check kind matches
the CPU and the ledger counts those overloads reached with the aten cases; on a backend with a
planted defect in each (suites/aten/planted.py) each case fails, naming what differs."""

from __future__ import annotations

import json

from conform_cli import cli, evidences, outcomes

SLICE = r"^(hardtanh_|silu_backward\.grad_input|eq\.Scalar_out|_add_relu\.Scalar)$"
CASES = {"aten/hardtanh_/float32/inplace", "aten/silu_backward.grad_input/float32/out",
         "aten/eq.Scalar_out/float32/out"}


def run(db, *args, env=None):
    cli("run", "--suite", "aten", "--ops", SLICE, "-j", "1", "--reruns", "0", "--db", str(db), *args,
        check=False, env=env)
    return outcomes(db), evidences(db)


def test_the_slice_matches_the_cpu_and_the_ledger_counts_it(tmp_path):
    db = tmp_path / "results.db"
    got, _ = run(db)
    assert CASES | {"aten/_add_relu.Scalar/float32/scalar"} == set(got)
    assert all(o in ("pass", "fallback") for o in got.values()), got
    rows = {r["overload"]: r for r in json.loads(cli("ledger", "--db", str(db), "--format", "json").stdout)["rows"]}
    for case in CASES:
        overload = "aten::" + case.split("/")[1]
        assert rows[overload]["status"] in ("native", "fallback")
        assert rows[overload]["case"] == case


def test_each_planted_defect_fails_its_case(tmp_path):
    db = tmp_path / "results.db"
    got, evidence = run(db, "--backend-module", "defects_backend",
                        env={"DEFECTS_CLASSES": "ignores_max,ignores_derivative,negated"})
    for case in CASES:
        assert got[case] == "fail", (case, got[case], evidence[case].get("message"))
    assert evidence["aten/hardtanh_/float32/inplace"]["compared"].startswith("aten::hardtanh_ ")
    assert evidence["aten/silu_backward.grad_input/float32/out"]["donor"] == "aten::silu_backward"
    assert "from aten::eq.Scalar" in evidence["aten/eq.Scalar_out/float32/out"]["call"]
    assert got["aten/_add_relu.Scalar/float32/scalar"] in ("pass", "fallback")  # nothing planted there
