"""The compile cache: keys and hits in memory, persistence, corruption and concurrency on disk,
the emulated compiler's latency, failures kept, claims between processes compiling one key, and
the size bound."""

import json
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
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_same_signature_hits_new_shape_compiles(unfused):
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
    assert all(p.read_text().startswith("NEURONSIM-NEFF 7\n") for p in entries)
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


def test_the_ops_compiled_and_loaded_are_counted_for_an_estimate_at_the_declared_latency(tmp_path):
    """compiled_ops and loaded_ops: the ops of the executables a process compiled, and of those a
    later process loaded from disk instead; with declared_compile_latency() (the device's figures,
    whatever latency is emulated now) they give what compiling costs there (check-model's estimate)."""
    code = WORKLOAD.replace("print(json.dumps(ns.compile_cache_stats()))",
                            "print(json.dumps({**ns.compile_cache_stats(), 'declared': ns.declared_compile_latency()}))")
    first = stats_of(run_python(code, NEURONSIM_CACHE_DIR=str(tmp_path)))
    second = stats_of(run_python(code, NEURONSIM_CACHE_DIR=str(tmp_path)))
    assert first["compiles"] >= 2 and first["compiled_ops"] >= first["compiles"] and first["loaded_ops"] == 0, first
    assert second["compiles"] == 0 and second["disk_hits"] == first["compiles"], second
    assert second["loaded_ops"] == first["compiled_ops"] and second["compiled_ops"] == 0, second
    assert first["declared"] == second["declared"] == {"base_seconds": 3.0, "per_op_seconds": 0.2}


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


UNDER_WAY = """
import json, threading, time, torch, torch_neuronsim as ns
x = torch.ones(5, device="neuron")
ns._C._reset_compile_cache_stats()
ns.set_compile_latency("3")
worker = threading.Thread(target=lambda: (x * 3).cpu())
worker.start()
time.sleep(1.5)
during = ns.compile_cache_stats()
worker.join()
print(json.dumps({"during": during, "after": ns.compile_cache_stats()}))
"""


def test_a_compile_under_way_is_counted_before_it_ends():
    """compiling_seconds: how long the lookups under way have been compiling, so that a harness
    timing its cases by run time sees a long compile before it ends (compile_seconds counts it
    once it has); nothing is left under way after."""
    got = stats_of(run_python(UNDER_WAY, NEURONSIM_DISABLE_CACHE="1"))
    during, after = got["during"], got["after"]
    assert 0.5 <= during["compiling_seconds"] < 3 and during["compile_seconds"] == 0, during
    assert after["compiling_seconds"] == 0 and after["compile_seconds"] >= 3, after


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


REFUSALS = """
import json, torch, torch_neuronsim as ns
ops = {"sin": torch.sin, "mul": lambda t: t * 2, "sum": torch.sum, "cumsum": lambda t: t.cumsum(0)}
seen = {}
for dtype in (torch.complex64, torch.complex128, torch.float64, torch.int64):
    for name, op in ops.items():
        try:
            op(torch.ones(3, dtype=dtype).to("neuron"))
            torch.neuron.synchronize()
            seen[f"{name} {dtype}"] = None
        except Exception as exc:  # noqa: BLE001 - the refusal is what is compared
            seen[f"{name} {dtype}"] = [type(exc).__name__, str(exc)]
print(json.dumps({"seen": seen, "stats": ns.compile_cache_stats()}))
"""


def test_a_refusal_is_kept_on_disk_for_every_later_process(tmp_path):
    """As Neuron's cache keeps failed compilations: a signature the device refuses (here, each
    dtype it has no arithmetic for, NEURONSIM_64BIT=error) is refused in every later process from
    the cache, with the same error, without compiling it again: at `realistic` latency each
    refusal compiled anew costs every worker seconds."""
    env = {"NEURONSIM_CACHE_DIR": str(tmp_path), "NEURONSIM_64BIT": "error"}
    first = stats_of(run_python(REFUSALS, **env))
    refused = {call: error for call, error in first["seen"].items() if error is not None}
    assert len(refused) >= 12, first["seen"]  # the complex and 64-bit signatures
    assert first["stats"]["failed_compiles"] >= len(refused), first["stats"]
    second = stats_of(run_python(REFUSALS, **env))
    assert second["seen"] == first["seen"]
    assert second["stats"]["compiles"] == 0, second["stats"]
    assert second["stats"]["failure_hits"] == first["stats"]["failed_compiles"], second["stats"]


MANY_KEYS = """
import json, sys, torch, torch_neuronsim as ns
for n in range(1, int(sys.argv[1]) + 1):  # a new shape, a new key: of mul, and of the copy to the device
    torch.ones(n).to("neuron") * 2
print(json.dumps(ns.compile_cache_stats()))
"""


def _spawn(code: str, *args: str, **env: str) -> subprocess.Popen:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith("NEURONSIM_")}
    full.update(env)
    return subprocess.Popen([sys.executable, "-c", code, *args], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_processes_compiling_the_same_keys_compile_each_once(tmp_path):
    """Four processes compiling the same keys into one directory at once: each key is compiled by
    one of them (its claim), the others wait for its entry instead of compiling it again."""
    # 150 keys at 20 ms each: seconds of compiling, so that processes started apart still meet
    procs = [_spawn(MANY_KEYS, "150", NEURONSIM_CACHE_DIR=str(tmp_path), NEURONSIM_COMPILE_LATENCY="0.02")
             for _ in range(4)]
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        stats.append(json.loads(out.strip().splitlines()[-1]))
    entries = list(tmp_path.rglob("*.neff"))
    compiles = sum(s["compiles"] for s in stats)
    assert len(entries) >= 150 and compiles == len(entries), (compiles, len(entries), stats)  # not 4 x
    assert sum(s["claims_waited"] for s in stats) > 0, stats  # they did meet
    # waiting for another's compile is timed; nothing is left under way at the end
    assert all((s["claim_wait_seconds"] > 0) == (s["claims_waited"] > 0) for s in stats), stats
    assert all(s["compiling_seconds"] == 0 for s in stats), stats
    assert not list(tmp_path.rglob("*.claim")) and not list(tmp_path.rglob("*.tmp.*"))


HOLD = """
import torch, torch_neuronsim as ns
torch.ones(77).to("neuron") * 2  # the copy compiles; the mul's compile then takes minutes
"""


def test_a_claim_left_by_a_killed_process_is_broken(tmp_path):
    """kill -9 of a process compiling a key leaves its claim; another process compiling the key
    finds the holder dead, breaks the claim and compiles, without waiting for the claim to expire."""
    import signal
    import time

    holder = _spawn(HOLD, NEURONSIM_CACHE_DIR=str(tmp_path), NEURONSIM_COMPILE_LATENCY="0,120")
    deadline = time.monotonic() + 60
    while not list(tmp_path.rglob("*.claim")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.rglob("*.claim")), holder.communicate(timeout=5)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    started = time.monotonic()
    stats = stats_of(run_python(HOLD + "print(__import__('json').dumps(ns.compile_cache_stats()))",
                                NEURONSIM_CACHE_DIR=str(tmp_path)))
    assert stats["claims_broken"] == 1 and stats["compiles"] >= 1, stats
    assert time.monotonic() - started < 30  # not the claim's expiry
    assert not list(tmp_path.rglob("*.claim"))


def test_the_disk_cache_stays_under_its_size_evicting_the_least_recently_used(tmp_path):
    limit = 64 * 1024
    stats = stats_of(run_python(MANY_KEYS.replace("sys.argv[1]", "400"), NEURONSIM_CACHE_DIR=str(tmp_path),
                                NEURONSIM_CACHE_SIZE=str(limit)))
    total = sum(p.stat().st_size for p in tmp_path.rglob("*.neff"))
    assert stats["evicted"] > 0 and total <= limit, (stats, total)
    bad = run_python("import torch_neuronsim", NEURONSIM_CACHE_SIZE="lots")
    assert bad.returncode != 0 and "NEURONSIM_CACHE_SIZE='lots' is not a cache size" in bad.stderr


GRAPH = """
import json, torch, torch_neuronsim as ns
f = torch.compile(lambda a: (a.sin() + 1) * 2, backend="neuron", fullgraph=True, dynamic=False)
f(torch.randn(5, 7, device="neuron")).cpu()
print(json.dumps(ns.compile_stats()))
"""


def test_processes_compiling_the_same_graph_lower_it_once(tmp_path):
    """torch.compile's graph cache claims as the eager cache does: processes sharing a directory
    lower a graph once; the others wait for it (or find it published) and lower nothing."""
    procs = [_spawn(GRAPH, NEURONSIM_CACHE_DIR=str(tmp_path), NEURONSIM_COMPILE_LATENCY="2,0") for _ in range(3)]
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        stats.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(s["lowered"] for s in stats) == 1, stats
    assert sum(s["disk_hits"] for s in stats) == 2, stats  # the others loaded its entry
    assert not list(tmp_path.rglob("*.claim"))


SCALAR_KINDS = """
import json, os, torch, torch_neuronsim
OPS = {
    "add": lambda t, s: t + s,
    "mul": lambda t, s: t * s,
    "add.Scalar": lambda t, s: torch.ops.aten.add.Scalar(t, s),  # as ATen's own composites call it
    "pow": lambda t, s: t ** s,
    "clamp_min": lambda t, s: torch.clamp(t, min=s),
    "where": lambda t, s: torch.where(t > 1, t, s),
    "fused chain": lambda t, s: (t * 2 - t) * s + s,
}
DTYPES = [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16]
EQUAL_VALUES = [(1, 1.0, True), (0, 0.0, False, -0.0), (2, 2.0), (-3, -3.0)]
wrong = []
for name, f in OPS.items():
    for dtype in DTYPES:
        for group in EQUAL_VALUES:
            for s in (group[::-1] if os.environ["SCALAR_ORDER"] == "reversed" else group):
                t = torch.tensor([3, 0, 1, 2], dtype=dtype)
                try:
                    expected = f(t, s)
                except Exception:  # the CPU refuses it (bool minus bool): nothing to compare
                    continue
                try:
                    torch.testing.assert_close(f(t.to("neuron"), s).cpu(), expected, rtol=1e-3, atol=1e-3)
                except AssertionError as e:
                    wrong.append(f"{name} {dtype} {s!r}: {str(e).splitlines()[0]}")
print(json.dumps(wrong))
"""


def test_scalars_equal_in_value_but_not_in_kind_never_share_an_executable(tmp_path):
    """pow(t, 2) keeps an integer t's dtype, pow(t, 2.0) promotes it: an int, a float and a bool
    that compare equal must never be served each other's executable, in either order, in one
    process or from another's disk cache, op by op or fused in a chain."""
    for order in ("given", "reversed"):  # the second process is served the first one's entries
        assert stats_of(run_python(SCALAR_KINDS, NEURONSIM_CACHE_DIR=str(tmp_path), SCALAR_ORDER=order)) == []
