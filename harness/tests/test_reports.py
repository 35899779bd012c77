"""Reports, diff, gate and dashboard on a fixed small DB (tests/data/small_run.json, imported).

The DB holds one run of 30 cases with every outcome but timeout, including a planted error
message that contains a <script> element. Golden files live in tests/golden/; regenerate them
after an intended change with UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import junitparser
import pytest

from conform_cli import HERE, cli, evidences, fixture_run, import_runs, run_record

GOLDEN = HERE / "golden"
RUN = "20260101-000000-gold"
CHROMIUM = shutil.which("chromium")


def small_run() -> dict[str, Any]:
    """The fixed run, with the skip lists the bundled backend ships (recorded by every run since
    backends ship them): where the report finds the ledger's dispositions."""
    run = fixture_run("small_run")
    run["backend_info"]["skiplists"] = [str(HERE.parents[1] / "skiplists")]
    return run


def load_small_db(path: Path) -> Path:
    return import_runs(path, small_run())


def clone_run(db: Path, new_id: str, started_at: str, changes: dict[str, str],
              plant: Callable[[dict[str, Any]], None] | None = None) -> None:
    """A copy of the fixed run as a later run, with some outcomes changed and whatever else
    `plant` does to it (planted)."""
    run = {**small_run(), "id": new_id, "started_at": started_at, "ended_at": started_at}
    for result in run["results"]:
        if result["case"] in changes:
            outcome = changes[result["case"]]
            result["outcome"] = outcome
            result["evidence"] = {"message": f"planted {outcome}"} if outcome not in ("pass", "fallback") else {}
    if plant is not None:
        plant(run)
    import_runs(db, run)


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    return load_small_db(tmp_path / "results.db")


def normalized(text: str, db: Path) -> str:
    return text.replace(str(db), "<DB>")


@pytest.mark.parametrize("name", ["summary.md", "junit.xml", "ops.csv", "coverage.json"])
def test_each_format_matches_its_golden_file(small_db, tmp_path, name):
    cli("report", "--db", str(small_db), "--run", RUN, "--out", str(tmp_path / "out"))
    actual = normalized((tmp_path / "out" / name).read_text(), small_db)
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(actual)
    assert actual == golden.read_text(), f"{name} differs from {golden} (UPDATE_GOLDEN=1 to accept)"


def test_coverage_headline_counts_what_the_db_holds(small_db, tmp_path):
    cli("report", "--db", str(small_db), "--out", str(tmp_path / "out"))
    cov = json.loads((tmp_path / "out" / "coverage.json").read_text())
    counts = run_record(small_db, RUN)["outcomes"]
    assert {k: v for k, v in cov["headline"]["outcomes"].items() if v} == counts
    assert cov["headline"]["declared_native_ops"] == 7
    assert cov["skips_by_category"]["crash"] == {"skip": 4}
    tan = next(s for s in cov["subjects"] if s["name"] == "tan")
    assert tan["dtypes"]["float32"] == {"forward": "xfail", "out": "fail"}
    nonzero = next(a for a in cov["aten"] if a["op"] == "aten::nonzero")
    assert nonzero["cases_fallback"] == 2 and nonzero["declared_native"] is False


def test_the_ledger_counts_with_the_dispositions_the_run_stored(small_db, tmp_path):
    """A run recorded before runs stored their dispositions is counted with the backend's file as it
    is now, and says so; one that stored them is counted with those, whatever the file holds."""
    cli("report", "--db", str(small_db), "--out", str(tmp_path / "now"))
    now = json.loads((tmp_path / "now" / "coverage.json").read_text())["ledger"]
    assert now["dispositions"].startswith("the backend's ledger/dispositions.json as it is now")
    assert now["not_applicable"] == 1 and now["unreached_disposed"] == 1  # what the shipped file disposes of
    planted = small_run()  # planted: the run stored dispositions of nothing
    planted["backend_info"]["dispositions"] = {"file": "planted.json", "problems": 0, "overloads": {}}
    cli("report", "--db", str(import_runs(tmp_path / "stored.db", planted)), "--out", str(tmp_path / "stored"))
    stored = json.loads((tmp_path / "stored" / "coverage.json").read_text())["ledger"]
    assert stored["dispositions"] == "stored with the run"
    assert stored["not_applicable"] == stored["unreached_disposed"] == 0
    assert stored["unreached_undisposed"] == now["unreached_undisposed"] + 2


def test_junit_is_read_by_a_junit_parser(small_db, tmp_path):
    cli("report", "--db", str(small_db), "--out", str(tmp_path / "out"))
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "out" / "junit.xml"))
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (30, 2, 13, 6)
    kinds = {}
    for case in suite:
        kinds[f"{case.classname}/{case.name}"] = [type(r).__name__ for r in case.result]
    assert kinds["ops.tan/float32/out"] == ["Failure"]
    assert kinds["ops.neg/float32/out"] == ["Failure"]  # xpass: the skip list is stale
    assert kinds["ops.sin/float32/forward"] == ["Error"]  # crash
    assert kinds["ops.cos/float32/forward"] == ["Skipped"]
    assert kinds["ops.tan/float32/forward"] == ["Skipped"]  # xfail
    assert kinds["ops.erfinv/float32/forward"] == []  # fallback passes, with a property


def test_run_writes_the_reports_and_points_latest(tmp_path):
    db = tmp_path / "results.db"
    cli("run", "--ops", "^add$", "--dtypes", "float32", "--checks", "forward", "--db", str(db), "--timeout", "60")
    latest = tmp_path / "latest"
    assert latest.is_symlink()
    for name in ("index.html", "coverage.json", "summary.md", "junit.xml", "ops.csv"):
        assert (latest / name).is_file(), name
    cov = json.loads((latest / "coverage.json").read_text())
    assert cov["headline"]["declared_native_ops"] > 400  # the backend's native_ops(), recorded with the run
    assert cov["headline"]["declared_native_ops_exercised"] >= 1


def test_bad_input_is_one_line_and_nonzero(small_db, tmp_path):
    missing = cli("report", "--db", str(small_db), "--run", "no-such-run", check=False)
    assert missing.returncode == 2 and missing.stderr.strip() == f"neuron-conform: error: no run 'no-such-run' in {small_db}"
    empty = import_runs(tmp_path / "empty.db")  # a results DB without a run
    for args in (["report"], ["dashboard", "--out", str(tmp_path / "d")], ["diff"]):
        result = cli(*args, "--db", str(empty), check=False)
        assert result.returncode != 0 and "has no" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    absent = cli("report", "--db", str(tmp_path / "absent.db"), check=False)
    assert absent.returncode == 2 and "absent.db" in absent.stderr


def test_diff_reports_planted_regressions_and_improvements(small_db):
    clone_run(small_db, "20260102-000000-next", "2026-01-02T00:00:00.000Z",
              {"ops/add/float32/forward": "fail", "ops/tan/float32/out": "pass", "ops/abs/float32/out": "fallback"})
    text = cli("diff", "previous", "latest", "--db", str(small_db)).stdout
    assert "new failures (1):\n  ops/add/float32/forward  pass -> fail  planted fail" in text
    assert "new passes (1):\n  ops/tan/float32/out  fail -> pass" in text
    assert "now through the fallback or computed on the host (1):\n  ops/abs/float32/out  pass -> fallback" in text
    data = json.loads(cli("diff", RUN, "latest", "--db", str(small_db), "--format", "json").stdout)
    assert [c["id"] for c in data["new_failures"]] == ["ops/add/float32/forward"]
    assert {"id": "add", "before": "partial", "after": "partial", "before_message": "", "after_message": ""} \
        not in data["subject_changes"]
    md = cli("diff", RUN, "latest", "--db", str(small_db), "--format", "markdown").stdout
    assert "| new failures | 1 |" in md and "`ops/add/float32/forward`" in md
    assert cli("diff", RUN, RUN, "--db", str(small_db)).stdout.endswith("no change\n")


def test_gate_exit_codes_baseline_files_and_policies(small_db, tmp_path):
    baseline = tmp_path / "baseline.json"
    cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    # the fixed run has crashes: the default policy fails on any crash
    crashes = cli("gate", "--baseline", str(baseline), "--db", str(small_db), check=False)
    assert crashes.returncode == 1 and "4 crash(es) or timeout(s)" in crashes.stdout
    tolerant = tmp_path / "policy.json"
    tolerant.write_text(json.dumps({"fail_on_crash": False}))
    gate = ["--baseline", str(baseline), "--db", str(small_db), "--policy", str(tolerant)]
    same = cli("gate", *gate)
    assert same.stdout.startswith("### neuron-conform gate: PASS") and "No change against the baseline." in same.stdout
    # only an improvement: 2 until the baseline is updated
    clone_run(small_db, "20260102-000000-next", "2026-01-02T00:00:00.000Z", {"ops/tan/float32/out": "pass"})
    improved = cli("gate", *gate, check=False)
    assert improved.returncode == 2 and "unacknowledged improvements" in improved.stdout
    assert "ops/tan/float32/out: fail → pass" in improved.stdout
    cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    assert cli("gate", *gate).returncode == 0  # acknowledged
    # a regression: 1, whatever else improved
    clone_run(small_db, "20260103-000000-third", "2026-01-03T00:00:00.000Z",
              {"ops/tan/float32/out": "pass", "ops/add/float32/forward": "error", "ops/abs/float32/out": "fallback"})
    regressed = cli("gate", *gate, check=False)
    assert regressed.returncode == 1
    assert "regression: 1 case(s) that matched in the baseline fail now" in regressed.stdout
    assert "ops/add/float32/forward: pass → error planted error" in regressed.stdout
    # the baseline may be a run too
    assert cli("gate", "--baseline", "previous", "--db", str(small_db), "--policy", str(tolerant),
               check=False).returncode == 1
    # a match whose values are no longer compared is a pass lost, not a pass: a regression
    cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    clone_run(small_db, "20260104-000000-fourth", "2026-01-04T00:00:00.000Z",
              {"ops/tan/float32/out": "unverified", "ops/add/float32/forward": "error", "ops/abs/float32/out": "fallback"})
    unverified = cli("gate", *gate, check=False)
    assert unverified.returncode == 1, unverified.stdout
    assert "0 case(s) that matched in the baseline fail now, 1 are unverified now" in unverified.stdout
    assert "ops/tan/float32/out: pass → unverified" in unverified.stdout
    assert "now unverified (values not compared) (1):" in cli("diff", "previous", "latest", "--db", str(small_db)).stdout


def test_gate_bad_baseline_and_policy_exit_3(small_db, tmp_path):
    baseline = tmp_path / "baseline.json"
    cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    data = json.loads(baseline.read_text())
    data["schema_version"] = 99
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    result = cli("gate", "--baseline", str(old), "--db", str(small_db), check=False)
    assert result.returncode == 3 and "schema version 99, this harness reads versions 1 and 2" in result.stderr
    policy = tmp_path / "policy.json"
    policy.write_text('{"fail_on_regresion": true}')
    result = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert result.returncode == 3 and 'unknown field "fail_on_regresion"' in result.stderr
    policy.write_text('{"max_new_fallback_ops": "3"}')
    result = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert result.returncode == 3 and '"max_new_fallback_ops" must be a whole number' in result.stderr


def test_one_gate_over_every_suite_of_a_baseline(small_db, tmp_path, monkeypatch):
    """A baseline file holds a section per suite; the gate judges the newest run of each, prints
    one verdict grouped by suite and exits with the worst: a regression in one suite fails the
    night, and a suite without a run fails it too; a suite that ran without a section is not gated,
    and says so."""
    monkeypatch.setenv("NEURON_CONFORM_SUITES", str(Path(__file__).resolve().parent / "planted_suites"))
    bulky = ["run", "--suite", "bulky", "--ops", "^parcel00[0-3]$", "--db", str(small_db), "--reruns", "0", "-j", "1"]
    cli(*bulky)
    baseline = tmp_path / "night.json"
    policy = tmp_path / "policy.json"
    policy.write_text('{"fail_on_crash": false}')  # the small run's planted crashes are not news here
    wrote = cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    assert "for suite bulky" in wrote.stdout and "for suite ops" in wrote.stdout
    assert set(json.loads(baseline.read_text())["suites"]) == {"bulky", "ops"}

    same = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy))
    assert "gate over 2 suites: PASS" in same.stdout and "| bulky | PASS | 4 |" in same.stdout

    cli(*bulky, "--failing", "parcel002", check=False)
    regressed = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert regressed.returncode == 1
    assert "| bulky | FAIL: regressions | 4 |" in regressed.stdout and "| ops | PASS |" in regressed.stdout
    assert "## suite bulky" in regressed.stdout and "bulky/parcel002/-/store" in regressed.stdout

    # --run judges that run against its own suite's section only
    only_ops = cli("gate", "--baseline", str(baseline), "--run", RUN, "--db", str(small_db), "--policy", str(policy),
                   check=False)
    assert only_ops.returncode == 0 and "gate over" not in only_ops.stdout, only_ops.stdout

    data = json.loads(baseline.read_text())
    data["suites"]["sizes"] = data["suites"]["bulky"] | {"cases": {}}
    baseline.write_text(json.dumps(data))
    missing = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert missing.returncode == 1 and "| sizes | FAIL: no run of the suite" in missing.stdout

    # a suite that ran but has no section is said not to be gated, and the night is not a plain pass
    data["suites"] = {"ops": data["suites"]["ops"]}
    baseline.write_text(json.dumps(data))
    ungated = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert ungated.returncode == 2, ungated.stdout
    assert "gate over 2 suites" in ungated.stdout and "| bulky | NOT GATED: no section in the baseline" in ungated.stdout


# --- in a real browser ----------------------------------------------------------------------

@pytest.fixture
def browser():
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (make setup installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, path: Path):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    return page, errors


def test_html_report_filters_shows_evidence_and_never_runs_data(small_db, tmp_path, browser):
    cli("report", "--db", str(small_db), "--out", str(tmp_path / "out"))
    page, errors = open_page(browser, tmp_path / "out" / "index.html")
    assert "neuron-conform: ops run 20260101-000000-gold" in page.locator("#title").text_content()
    assert page.locator("#matrix tr[data-subject]").count() == 8
    page.fill("#q", "ta")
    assert [r.get_attribute("data-subject") for r in page.locator("#matrix tr[data-subject]").all()] == ["tan"]
    page.fill("#q", "")
    page.select_option("#outcome", "crash")
    assert [r.get_attribute("data-subject") for r in page.locator("#matrix tr[data-subject]").all()] == ["sin"]
    page.select_option("#outcome", "")
    # the planted <script> in an error message is shown as text, and never runs
    page.locator("#matrix tr[data-subject='abs'] td.cell").first.click()
    assert '<script>document.title="pwned"</script>' in page.locator("#details").text_content()
    assert page.title() != "pwned" and page.locator("#details script").count() == 0
    assert "neuron-conform repro ops/abs/complex64/forward" in page.locator("#details").text_content()
    page.select_option("#view", "aten")
    assert page.locator("#aten tr").count() == 11  # header + 10 aten ops
    assert "of 7 declared native ops exercised" in page.locator("#shown").text_content()
    assert errors == []
    # a filtered view is addressable
    page2, errors2 = open_page(browser, tmp_path / "out" / "index.html")
    page2.goto((tmp_path / "out" / "index.html").as_uri() + "#q=nonzero")
    page2.reload()
    assert [r.get_attribute("data-subject") for r in page2.locator("#matrix tr[data-subject]").all()] == ["nonzero"]
    assert errors2 == []


def test_dashboard_over_history(small_db, tmp_path, browser):
    cli("report", "--db", str(small_db), "--run", RUN)
    clone_run(small_db, "20260102-000000-next", "2026-01-02T00:00:00.000Z",
              {"ops/add/float32/forward": "fail", "ops/tan/float32/out": "pass"})
    out = tmp_path / "dashboard"
    printed = cli("dashboard", "--db", str(small_db), "--out", str(out)).stdout
    assert "suite ops: 2 run(s)" in printed and "1 new failure(s)" in printed
    (model,) = json.loads((out / "dashboard.json").read_text())["suites"]
    assert [r["run"]["id"] for r in model["runs"]] == [RUN, "20260102-000000-next"]
    assert model["regressions"] == [{"id": "ops/add/float32/forward", "before": "pass", "after": "fail",
                                     "message": "planted fail"}]
    add = next(o for o in model["subjects"] if o["name"] == "add")
    assert add["history"] == "PP" and add["last_changed"] is None
    tan = next(o for o in model["subjects"] if o["name"] == "tan")
    assert tan["history"] == "XP" and tan["last_changed"] == "20260102-000000-next"
    assert model["runs"][0]["report"] == f"../runs/{RUN}/index.html" and model["runs"][1]["report"] is None
    # The same backend version changed its mind about these cases between the two runs.
    unstable = {c["id"]: [h["outcome"] for h in c["history"]] for c in model["unstable"]["cases"]}
    assert unstable == {"ops/add/float32/forward": ["pass", "fail"], "ops/tan/float32/out": ["fail", "pass"]}
    newest = model["runs"][-1]["outcomes"]
    ran = sum(n for o, n in newest.items() if o != "skip")
    assert model["headline"]["new_failures"] == 1 and model["headline"]["cases_run"] == ran
    assert model["headline"]["pass_rate"] == pytest.approx(100 * (newest.get("pass", 0) + newest.get("fallback", 0)) / ran)
    page, errors = open_page(browser, out / "index.html")
    assert page.locator("#suite-ops .charts svg").count() >= 4
    assert "ops/add/float32/forward" in page.locator("#suite-ops .regressions").text_content()
    assert "pass → fail" in page.locator("#suite-ops .unstable").text_content()
    page.fill("#suite-ops input.q", "add")
    assert page.locator("#suite-ops .ops tr").count() == 2
    assert errors == []


def test_dashboard_shows_every_suite_with_its_headline(small_db, tmp_path, browser):
    """Without --suite: the newest run of each suite at the top, a section per suite."""
    clone_run(small_db, "20260102-000000-next", "2026-01-02T00:00:00.000Z", {"ops/add/float32/forward": "fail"})
    clone_run(small_db, "20260103-000000-mods", "2026-01-03T00:00:00.000Z", {},
              plant=lambda run: run.update(suite="modules"))  # the third run is of another suite
    out = tmp_path / "dashboard"
    printed = cli("dashboard", "--db", str(small_db), "--out", str(out)).stdout
    assert "dashboard of 2 suite(s)" in printed
    model = json.loads((out / "dashboard.json").read_text())
    assert [s["suite"] for s in model["suites"]] == ["modules", "ops"]
    headline = {s["suite"]: s["headline"] for s in model["suites"]}
    assert headline["ops"]["run"] == "20260102-000000-next" and headline["ops"]["new_failures"] == 1
    assert headline["modules"]["run"] == "20260103-000000-mods" and headline["modules"]["new_failures"] == 0
    page, errors = open_page(browser, out / "index.html")
    rows = page.locator("#headline tr").all()[1:]
    assert [r.locator("td").first.text_content() for r in rows] == ["modules", "ops"]
    assert rows[1].locator(".bad").text_content() == "1"
    assert page.locator("section.suite").count() == 2
    assert page.locator("#suite-modules .charts svg").count() >= 4 and page.locator("#suite-ops .charts svg").count() >= 4
    only = cli("dashboard", "--db", str(small_db), "--out", str(tmp_path / "one"), "--suite", "modules").stdout
    assert "dashboard of 1 suite(s)" in only
    assert errors == []


def test_gate_fails_on_a_new_fallback_op_and_a_lost_native_op(small_db, tmp_path):
    baseline = tmp_path / "baseline.json"
    cli("gate", "--write-baseline", str(baseline), "--db", str(small_db))
    def add_falls_back(run: dict[str, Any]) -> None:  # planted: add.Tensor leaves the device for the fallback
        for result in run["results"]:
            if "aten::add.Tensor" in result["native_ops"]:
                result["fallback_ops"]["aten::add.Tensor"] = result["native_ops"].pop("aten::add.Tensor")

    clone_run(small_db, "20260102-000000-next", "2026-01-02T00:00:00.000Z", {}, plant=add_falls_back)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"fail_on_crash": False}))
    result = cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy), check=False)
    assert result.returncode == 1
    assert "native coverage dropped: 1 aten op(s) no longer run natively (allowed 0)" in result.stdout
    assert "1 aten op(s) newly through the CPU fallback (allowed 0)" in result.stdout
    policy.write_text(json.dumps({"fail_on_crash": False, "max_native_ops_lost": 1, "max_new_fallback_ops": 1}))
    assert cli("gate", "--baseline", str(baseline), "--db", str(small_db), "--policy", str(policy)).returncode == 0


def test_coverage_json_follows_its_documented_schema(small_db, tmp_path):
    import jsonschema

    schema = json.loads((HERE.parents[1] / "reports" / "coverage.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    cli("report", "--db", str(small_db), "--out", str(tmp_path / "out"))
    jsonschema.validate(json.loads((tmp_path / "out" / "coverage.json").read_text()), schema)


def test_the_report_and_the_dashboard_link_the_api_table_beside_the_db(small_db, tmp_path, browser):
    out = tmp_path / "dashboard"
    cli("report", "--db", str(small_db), "--run", RUN)
    cli("dashboard", "--db", str(small_db), "--out", str(out))
    page, _ = open_page(browser, small_db.parent / "runs" / RUN / "index.html")
    assert page.locator("#links a").count() == 0  # no table yet: no link
    table = small_db.parent / "api-compat" / "torch_api_compatibility.md"  # where api-compat writes it
    table.parent.mkdir()
    table.write_text("# torch API compatibility\n")
    cli("report", "--db", str(small_db), "--run", RUN)
    cli("dashboard", "--db", str(small_db), "--out", str(out))
    for html in (small_db.parent / "runs" / RUN / "index.html", out / "index.html"):
        page, errors = open_page(browser, html)
        href = page.locator("#links a").get_attribute("href")
        assert (html.parent / href).resolve() == table.resolve() and errors == []


def test_each_subject_shows_the_input_space_its_cases_covered(tmp_path):
    """The report's input-space view (coverage.json `space`, the HTML's "Input space" table)
    gathers what each subject's cases were exercised on from their evidence: layout kinds, the
    incoming gradients' layouts, device variants, relations, edge variants; and fuzz examples."""
    db = tmp_path / "results.db"
    cli("run", "--ops", "^(nn.functional.layer_norm)$", "--dtypes", "float32",
        "--checks", "forward,backward,devices,invariance", "--no-skiplists", "--db", str(db))
    cli("report", "--db", str(db), "--out", str(tmp_path / "out"))
    [row] = json.loads((tmp_path / "out" / "coverage.json").read_text())["subjects"]
    space = row["space"]
    assert {"permuted", "offset", "expanded"} <= set(space["layouts"]) and "noncontiguous" in space["layouts"]
    assert "grad_noncontiguous" in space["gradient_layouts"] and not any(k.startswith("grad_") for k in space["layouts"])
    assert "other_device" in space["devices"] and "cpu_operand_refused" in space["devices"]
    assert set(space["relations"]) == {"shift", "batch"} and space["edge_variants"] > 0
    assert space["fuzz_examples"] == 0 and space["list_lengths"] == []
    cli("run", "--suite", "fuzz", "--ops", "^nn.functional.layer_norm$", "--db", str(db))
    cli("report", "--db", str(db), "--out", str(tmp_path / "fuzz"))
    [row] = json.loads((tmp_path / "fuzz" / "coverage.json").read_text())["subjects"]
    # every example the fuzzer ran: the 25 drawn, and each it ran again at the case's own setting
    [fuzzed] = evidences(db, "latest").values()
    assert row["space"]["fuzz_examples"] == fuzzed["fuzz"]["examples_run"] >= 25
    assert "Input space" in (tmp_path / "fuzz" / "index.html").read_text()


def test_a_run_goes_through_query_and_import_unchanged_and_bad_documents_are_named(small_db, tmp_path):
    """`import` is query's inverse: the fixtures and every planted run above go through it."""
    printed = run_record(small_db)
    copy = import_runs(tmp_path / "copy.db", printed)
    assert run_record(copy) == printed
    again = cli("import", "--db", str(copy), str(HERE / "data" / "small_run.json"), check=False)
    assert again.returncode == 2 and f"run {RUN} is in the DB already" in again.stderr
    broken = tmp_path / "broken.json"
    for document, problem in ((["not a run"], "not a run as `query` prints one: a run record is a JSON object"),
                              ({**printed, "results": [{"case": "ops/add"}]}, "result 0: malformed result"),
                              ({k: v for k, v in printed.items() if k != "seed"}, "no field 'seed'")):
        broken.write_text(json.dumps(document))
        result = cli("import", "--db", str(tmp_path / "new.db"), str(broken), check=False)
        assert result.returncode == 2 and f"{broken}: " in result.stderr and problem in result.stderr, result.stderr
    assert cli("query", "--db", str(tmp_path / "new.db"), "--runs").stdout.strip() == "[]"  # nothing half-imported
    broken.write_text('{"id": ')
    assert "broken.json" in cli("import", "--db", str(copy), str(broken), check=False).stderr
