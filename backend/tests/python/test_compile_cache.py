"""The compile cache: keys and hits in memory, persistence, corruption and concurrency on disk."""

import pathlib
import subprocess
import sys

import torch
import torch_neuronsim as ns

from device_helpers import run_python

WORKLOAD = """
import json, torch, torch_neuronsim as ns
x = torch.ones(4, 5, device="neuron")
y = (x * 2 + 1).sum(0)
z = torch.ones(3, device="neuron") * 2
print(json.dumps(ns.compile_cache_stats()))
"""


def stats_of(result):
    import json

    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_same_signature_hits_new_shape_compiles():
    x = torch.randn(7, 3, device="neuron")
    x + x  # make sure this signature is compiled
    ns._C._reset_compile_cache_stats()
    x + x
    x + x
    stats = ns.compile_cache_stats()
    assert stats["memory_hits"] == 2 and stats["compiles"] == 0 and stats["disk_hits"] == 0
    y = torch.randn(7, 4, device="neuron")  # (randn itself compiles its new shape too)
    ns._C._reset_compile_cache_stats()
    y + y
    assert ns.compile_cache_stats()["compiles"] + ns.compile_cache_stats()["disk_hits"] == 1
    ns._C._reset_compile_cache_stats()
    x.t() + x.t()  # same shape, other strides: another executable
    assert ns.compile_cache_stats()["memory_hits"] == 0
    x.to(torch.bfloat16) + 1  # other dtype: another executable
    x * 2  # other op
    stats = ns.compile_cache_stats()
    assert stats["memory_hits"] == 0 and stats["compiles"] + stats["disk_hits"] == 3
    assert stats["compile_seconds"] >= 0.0


def test_disk_cache_serves_a_second_process(tmp_path):
    first = stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path)))
    assert first["compiles"] >= 4 and first["disk_hits"] == 0
    entries = list(tmp_path.rglob("*.neff"))
    assert len(entries) == first["compiles"]
    assert all(p.read_text().startswith("NEURONSIM-NEFF 3\n") for p in entries)
    second = stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path)))
    assert second["compiles"] == 0 and second["disk_hits"] == first["compiles"]


def test_disable_cache_writes_nothing(tmp_path):
    stats = stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path), NEURONSIM_DISABLE_CACHE="1"))
    assert stats["compiles"] >= 4
    assert list(tmp_path.rglob("*")) == []


def test_corrupt_entries_are_recompiled_with_a_warning(tmp_path):
    stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path)))
    entries = sorted(tmp_path.rglob("*.neff"))
    entries[0].write_bytes(b"\x00garbage")
    text = entries[1].read_text()
    entries[1].write_text(text.replace("wrap_i64=1", "wrap_i64=0"))  # checksum no longer matches
    result = run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path))
    stats = stats_of(result)
    assert stats["disk_rejected"] == 2 and stats["compiles"] == 2
    assert "ignoring compile-cache entry" in result.stderr and "recompiling" in result.stderr
    assert "checksum mismatch" in result.stderr
    clean = stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path)))  # rewritten entries
    assert clean["disk_rejected"] == 0 and clean["compiles"] == 0


def test_concurrent_processes_share_a_cache_safely(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("NEURONSIM_")}
    env["NEURONSIM_CACHE_DIR"] = str(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", WORKLOAD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "ignoring compile-cache entry" not in err
    assert not list(tmp_path.rglob("*.tmp.*"))  # every temporary file was renamed into place
    after = stats_of(run_python(WORKLOAD, NEURONSIM_CACHE_DIR=str(tmp_path)))
    assert after["compiles"] == 0 and after["disk_rejected"] == 0


def test_cache_directory_is_configurable():
    assert pathlib.Path(ns._C._compile_cache_dir()).is_dir()


LATENCY = """
import json, time, torch, torch_neuronsim as ns
x = torch.ones(11, 13, device="neuron")
timed = {}
for name in ("first", "again"):
    ns._C._reset_compile_cache_stats()
    started = time.perf_counter()
    x * x
    timed[name] = {"seconds": time.perf_counter() - started, **ns.compile_cache_stats()}
ns.set_compile_latency("0")
ns._C._reset_compile_cache_stats()
started = time.perf_counter()
x * x * 1.5
timed["off"] = {"seconds": time.perf_counter() - started, **ns.compile_cache_stats()}
print(json.dumps(timed))
"""


def test_compile_latency_is_paid_once_per_signature_and_counted_apart():
    """NEURONSIM_COMPILE_LATENCY: each new executable costs the emulated compiler's time (base
    plus per op), counted in compile_seconds; a hit costs none of it; set_compile_latency("0")
    turns it off."""
    timed = stats_of(run_python(LATENCY, NEURONSIM_COMPILE_LATENCY="0.25,0.05", NEURONSIM_DISABLE_CACHE="1"))
    first, again, off = timed["first"], timed["again"], timed["off"]
    assert first["compiles"] == 1 and first["seconds"] >= 0.3 and first["compile_seconds"] >= 0.3, first
    assert again["compiles"] == 0 and again["seconds"] < 0.3 and again["compile_seconds"] == 0, again
    assert off["compiles"] >= 1 and off["seconds"] < 0.3, off
    bad = run_python("import torch_neuronsim", NEURONSIM_COMPILE_LATENCY="fast")
    assert bad.returncode != 0 and "NEURONSIM_COMPILE_LATENCY='fast' is not a compile latency" in bad.stderr


def test_a_failed_compile_is_cached_as_a_failure():
    """A signature the device refuses raises the same error again from the cache, without
    compiling (or paying the compiler's latency) a second time."""
    z = torch.ones(3, dtype=torch.complex64)
    errors = []
    ns._C._reset_compile_cache_stats()
    for _ in range(2):
        try:
            z.to("neuron").sin()
        except Exception as exc:  # noqa: BLE001 - the refusal itself is what is compared
            errors.append((type(exc), str(exc)))
    stats = ns.compile_cache_stats()
    assert len(errors) == 2 and errors[0] == errors[1], errors
    # the first refusal compiled (unless an earlier test had), the second came from the cache
    assert stats["failed_compiles"] <= 1 and stats["failed_compiles"] + stats["failure_hits"] == 2, stats
