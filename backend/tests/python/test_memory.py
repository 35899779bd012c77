"""Device memory: zero-size tensors, strides and memory formats, exact statistics, OOM."""

import pytest
import torch

from device_helpers import run_python

BLOCK = 512  # allocator rounding (DeviceAllocator::kBlockRounding)


def rounded(nbytes: int) -> int:
    return max(BLOCK, (nbytes + BLOCK - 1) // BLOCK * BLOCK)


def test_zero_size_tensors():
    torch.neuron.synchronize()  # queued work holds its operands' memory until it has run
    before = torch.neuron.memory_allocated()
    for shape in [(0,), (3, 0), (0, 5, 2)]:
        t = torch.empty(shape, device="neuron")
        assert t.shape == shape and t.numel() == 0
        assert t.cpu().shape == shape
    assert torch.neuron.memory_allocated() == before
    assert torch.ones(0, device="neuron").sum().item() == 0.0


def test_strides_and_memory_formats():
    t = torch.empty_strided((2, 3), (1, 2), device="neuron")
    assert t.stride() == (1, 2)
    cl = torch.empty(2, 3, 4, 5, device="neuron", memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)
    cpu = torch.randn(2, 3, 4, 5)
    moved = cpu.to("neuron", memory_format=torch.channels_last)
    assert moved.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(moved.cpu(), cpu)
    cl3d = torch.empty(1, 2, 3, 4, 5, device="neuron", memory_format=torch.channels_last_3d)
    assert cl3d.is_contiguous(memory_format=torch.channels_last_3d)


def test_statistics_are_exact():
    torch.neuron.empty_cache()
    base_alloc = torch.neuron.memory_allocated()
    base_reserved = torch.neuron.memory_reserved()
    base_count = torch.neuron.memory_stats()["allocation.all.current"]
    t = torch.empty(1000, dtype=torch.uint8, device="neuron")
    u = torch.empty(250, dtype=torch.float32, device="neuron")  # 1000 bytes too
    assert torch.neuron.memory_allocated() - base_alloc == 2 * rounded(1000)
    assert torch.neuron.memory_reserved() - base_reserved == 2 * rounded(1000)
    assert torch.neuron.memory_stats()["allocation.all.current"] - base_count == 2
    assert torch.neuron.memory_stats()["requested_bytes.all.current"] >= 2000
    del t
    assert torch.neuron.memory_allocated() - base_alloc == rounded(1000)
    assert torch.neuron.memory_reserved() - base_reserved == 2 * rounded(1000)  # cached
    del u
    torch.neuron.empty_cache()
    assert torch.neuron.memory_allocated() == base_alloc
    assert torch.neuron.memory_reserved() == base_reserved


def test_peak_and_reset():
    torch.neuron.reset_peak_memory_stats()
    base = torch.neuron.memory_allocated()
    big = torch.empty(1 << 20, dtype=torch.uint8, device="neuron")
    del big
    assert torch.neuron.max_memory_allocated() - base == 1 << 20
    torch.neuron.reset_peak_memory_stats()
    assert torch.neuron.max_memory_allocated() == torch.neuron.memory_allocated()


def test_statistics_are_per_device():
    base0 = torch.neuron.memory_allocated(0)
    base1 = torch.neuron.memory_allocated(1)
    t = torch.empty(4096, dtype=torch.uint8, device="neuron:1")
    assert torch.neuron.memory_allocated(1) - base1 == 4096
    assert torch.neuron.memory_allocated(0) == base0
    assert torch.neuron.memory_allocated("neuron:1") == torch.neuron.memory_allocated(1)
    del t


def test_mem_get_info_reports_capacity():
    free, total = torch.neuron.mem_get_info()
    assert total == 16 << 30
    assert free == total - torch.neuron.memory_reserved()


def test_out_of_memory_is_clear_and_recoverable():
    result = run_python(
        """
        import torch
        kept = torch.arange(1000, dtype=torch.float32, device="neuron")
        try:
            torch.empty(2 << 20, dtype=torch.uint8, device="neuron")
        except torch.OutOfMemoryError as e:
            print("OOM:", e)
        assert torch.equal(kept.cpu(), torch.arange(1000, dtype=torch.float32))  # nothing lost
        x = torch.ones(1000, device="neuron") * 2  # still usable
        print("after:", x.sum().item(), torch.neuron.memory_stats()["num_ooms"])
        """,
        NEURONSIM_DEVICE_MEMORY="1MiB",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "OOM: neuron:0 out of memory: tried to allocate 2.00 MiB (2097152 bytes)" in out
    assert "device capacity 1.00 MiB (NEURONSIM_DEVICE_MEMORY=1048576)" in out
    assert "4.00 KiB is in use by tensors" in out
    assert "after: 2000.0 1" in out


def test_cache_is_released_before_raising_oom():
    result = run_python(
        """
        import torch
        a = torch.empty(600 * 1024, dtype=torch.uint8, device="neuron")
        del a  # cached: reserved stays at 600 KiB
        b = torch.empty(700 * 1024, dtype=torch.uint8, device="neuron")  # fits only without the cache
        s = torch.neuron.memory_stats()
        print(s["num_alloc_retries"], s["num_ooms"], torch.neuron.memory_reserved())
        """,
        NEURONSIM_DEVICE_MEMORY="1MiB",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "0", str(700 * 1024)]


def test_accelerator_api_agrees():
    t = torch.empty(3000, dtype=torch.uint8, device="neuron")
    assert torch.accelerator.memory_allocated(0) == torch.neuron.memory_allocated(0)
    del t
