"""Runs that know a device compiles: each case's compile evidence, the reports' compile line, a
warm pass after which a run compiles nothing, and cases sharing executables kept together."""

from __future__ import annotations

import json

from conform_cli import cli, evidences, outcomes, runs

SLICE = ["--ops", "^(abs|add|cos)$", "--dtypes", "float32,bfloat16", "--checks", "forward,backward", "-j", "2"]


def test_a_warm_pass_leaves_the_run_after_it_nothing_to_compile(db, tmp_path):
    cache = {"NEURONSIM_CACHE_DIR": str(tmp_path / "cache")}
    warm = cli("run", *SLICE, "--warm", "--db", str(db), env=cache)
    assert "warm: 12 case(s) run on 2 worker(s)" in warm.stdout
    # a fresh cache: what one worker compiled, the other may load from it
    assert "compile:" in warm.stdout and "compile: 0 executable(s)" not in warm.stdout
    assert runs(db) == []  # a warm pass keeps no results
    result = cli("run", *SLICE, "--db", str(db), env=cache)
    assert set(outcomes(db).values()) <= {"pass", "fallback"}  # an op of a bfloat16 backward falls back
    for case, evidence in evidences(db).items():
        compiled = evidence["compile_cache"]
        assert compiled["compiles"] == 0 and compiled["disk_hits"] > 0, case
        assert set(compiled) >= {"compiles", "hits", "memory_hits", "disk_hits", "compile_seconds"}
    assert "compile: 0 executable(s) compiled" in result.stdout and "warm: nothing compiled" in result.stdout
    coverage = json.loads((db.parent / "latest" / "coverage.json").read_text())
    cache_totals = coverage["headline"]["compile_cache"]
    assert cache_totals["compiles"] == 0 and cache_totals["disk_hits"] > 0 and cache_totals["cases_compiling"] == 0
    assert coverage["headline"]["case_seconds"] > 0
    assert "Compile: 0 executable(s) compiled" in (db.parent / "latest" / "summary.md").read_text()


def test_after_a_warm_pass_models_compile_nothing_either(db, tmp_path):
    """Where what a case compiles could vary between processes: a backward whose gradients are
    accumulated while the queue still runs (in place or not, by the storage's use count), and a
    model that iterates a set of strings while it is traced (Gemma 4's layer types: its graph
    depends on Python's per-process hash salt). Each worker must trace and queue the same."""
    models = ["--suite", "hf", "--ops", "^(RwkvForCausalLM|Gemma4ForCausalLM)$", "--dtypes", "float32,bfloat16",
              "--checks", "backward,compiled_forward", "-j", "2", "--db", str(db)]
    cache = {"NEURONSIM_CACHE_DIR": str(tmp_path / "cache")}
    cli("run", *models, "--warm", env=cache)
    result = cli("run", *models, env=cache)
    evidence = evidences(db)
    assert len(evidence) == 8, sorted(evidence)
    for case, seen in evidence.items():
        assert seen["compile_cache"]["compiles"] == 0, (case, seen["compile_cache"])
        assert "lowered" not in seen.get("backend_compile_stats", {}), (case, seen["backend_compile_stats"])
    assert "warm: nothing compiled" in result.stdout


def test_a_cold_run_says_what_it_compiled_and_how_long(db, tmp_path):
    result = cli("run", *SLICE, "--db", str(db), env={"NEURONSIM_CACHE_DIR": str(tmp_path / "cache"),
                                                     "NEURONSIM_COMPILE_LATENCY": "0.01"})
    totals = json.loads((db.parent / "latest" / "coverage.json").read_text())["headline"]["compile_cache"]
    assert totals["compiles"] > 0 and totals["compile_seconds"] >= 0.01 * totals["compiles"]
    assert f"compile: {totals['compiles']} executable(s) compiled" in result.stdout
    # the cases of one op at one dtype ran on one worker, one after another: the checks after the
    # first find its executables in memory
    by_group: dict[str, list[int]] = {}
    for case, evidence in evidences(db).items():
        by_group.setdefault(case.rsplit("/", 1)[0], []).append(evidence["compile_cache"]["memory_hits"])
    assert all(len(hits) == 2 for hits in by_group.values())
    assert all(max(hits) > 0 for hits in by_group.values())


def test_a_case_is_timed_by_its_run_time_not_its_compile_time(db, tmp_path):
    """Each new executable takes longer to compile than --timeout allows a case (abs's out check
    compiles four, its run takes a few hundredths of a second): the case matches all the same, its
    compile time given beside the timeout; with none given (--compile-timeout 0) compiling is a
    timeout again. (A hang that compiles nothing still times out at --timeout: test_run.py, whose
    planted backend reports compile counters.)"""
    def run(cache: str, *args: str) -> dict[str, str]:
        cli("run", "--ops", "^abs$", "--dtypes", "float32", "--checks", "out", "--timeout", "3", "--reruns", "0",
            "--db", str(db), *args, check=False,
            env={"NEURONSIM_COMPILE_LATENCY": "4", "NEURONSIM_CACHE_DIR": str(tmp_path / cache)})
        return outcomes(db)

    assert run("first") == {"ops/abs/float32/out": "pass"}
    assert evidences(db, "latest")["ops/abs/float32/out"]["compile_cache"]["compile_seconds"] >= 2 * 4
    assert run("second", "--compile-timeout", "0") == {"ops/abs/float32/out": "timeout"}
    timeout = evidences(db, "latest")["ops/abs/float32/out"]
    assert timeout["compile_timeout_seconds"] == 0 and timeout["compiling_seconds"] > 0


def test_warm_refuses_resume(db):
    result = cli("run", "--warm", "--resume", "latest", "--db", str(db), check=False)
    assert result.returncode == 2 and "a warm pass is never resumed" in result.stderr
