"""The eager engine: native op set, tracking, fallback modes, dtype rules, rejections."""

import warnings

import pytest
import torch
import torch_neuronsim as ns
from torch.autograd import forward_ad as fwAD

ERFINV = "aten::erfinv.out"  # outside the native set (torch.erfinv reaches the device as erfinv.out)


def test_native_ops_resolve_to_real_overloads():
    ops = ns.native_ops()
    assert len(ops) == len(set(ops)) > 300
    for name in ops:
        base, _, overload = name[len("aten::"):].partition(".")
        packet = getattr(torch.ops.aten, base)
        assert (overload or "default") in packet.overloads(), name
        # a backend kernel for a CompositeImplicitAutograd op would bypass its autograd formula
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd"), name
        assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"), name
    assert torch._C._dispatch_find_dangling_impls() == []
    for core in ["aten::add.Tensor", "aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm",
                 "aten::_softmax", "aten::_log_softmax", "aten::amax", "aten::argmax", "aten::var.correction",
                 "aten::cat", "aten::index_select", "aten::gather", "aten::scatter.src", "aten::embedding",
                 "aten::where.self", "aten::masked_fill.Scalar", "aten::native_layer_norm",
                 "aten::native_dropout", "aten::cumsum", "aten::triu", "aten::tril", "aten::normal_",
                 "aten::arange.start_out", "aten::embedding_dense_backward", "aten::native_layer_norm_backward"]:
        assert core in ops, core
    # the direct kernels are a fast path for some of the native set, never an addition to it
    direct = ns._C._direct_kernel_ops()
    assert direct and set(direct) <= set(ops), set(direct) - set(ops)


def test_tracking_counts_native_and_fallback():
    ns.clear_op_tracking()
    x = torch.randn(8, device="neuron")
    y = x + x
    y = y + x
    torch.erfinv(x * 0.1)
    executed, fallback = ns.get_executed_ops(), ns.get_fallback_ops()
    assert executed["aten::add.Tensor"] == 2
    assert executed["aten::normal_"] == 1
    assert fallback == {ERFINV: 1}
    assert ERFINV not in executed
    ns.clear_op_tracking()
    assert ns.get_executed_ops() == {} and ns.get_fallback_ops() == {}


def test_mixture_of_experts_routing_runs_natively():
    # What transformers' MoE layers ask of the device: expert ids by floor division, gradients
    # accumulated into routed rows (_index_put_impl_ with accumulate), and unfold as a view.
    ids = torch.tensor([0, 5, 7, 11, 12])
    values = torch.randn(4)
    ns.clear_op_tracking()
    dev_ids = ids.to("neuron")
    torch.testing.assert_close((dev_ids // 4).cpu(), ids // 4)
    rows = torch.tensor([1, 3, 1, 0])
    table = torch.randn(5, requires_grad=True)
    (table[rows] * values).sum().backward()  # index's backward accumulates: row 1 twice
    on_device = table.detach().to("neuron").requires_grad_()
    (on_device[rows.to("neuron")] * values.to("neuron")).sum().backward()
    torch.testing.assert_close(on_device.grad.cpu(), table.grad)
    base = torch.arange(8.0, device="neuron")
    windows = base.unfold(0, 2, 2)
    windows[1, 0] = 100.0  # a view: the write reaches the tensor it unfolds
    assert base[2].item() == 100.0
    assert ns.get_fallback_ops() == {}
    executed = ns.get_executed_ops()
    assert executed["aten::floor_divide"] == 1 and executed["aten::_index_put_impl_"] == 1


def test_results_match_cpu():
    torch.manual_seed(0)
    a, b = torch.randn(5, 6), torch.randn(6, 3)
    da, db = a.to("neuron"), b.to("neuron")
    torch.testing.assert_close((da @ db).cpu(), a @ b)
    torch.testing.assert_close(torch.softmax(da, -1).cpu(), torch.softmax(a, -1))
    torch.testing.assert_close(da.sum(0).cpu(), a.sum(0))
    torch.testing.assert_close(torch.cat([da, da], 1).cpu(), torch.cat([a, a], 1))
    torch.testing.assert_close(da.t().contiguous().mul(2).cpu(), a.t().contiguous().mul(2))
    out = torch.empty(0, device="neuron")
    torch.add(da, 1, out=out)  # out= resizes the device tensor
    torch.testing.assert_close(out.cpu(), a + 1)
    da.mul_(3)
    torch.testing.assert_close(da.cpu(), a * 3)
    values, indices = torch.max(db, dim=1)
    assert indices.device.type == "neuron" and indices.dtype == torch.int64
    torch.testing.assert_close(values.cpu(), b.max(1).values)
    assert torch.equal(torch.arange(5, device="neuron").cpu(), torch.arange(5))


def test_fallback_modes():
    x = torch.rand(4, device="neuron") * 0.5
    ns.set_fallback_mode("error")
    with pytest.raises(NotImplementedError) as info:
        torch.erfinv(x)
    message = str(info.value)
    assert "aten::erfinv.out (float32) is not in the neuron native op set" in message
    assert "NEURONSIM_FALLBACK" in message
    assert (x + 1).device.type == "neuron"  # native ops still run

    ns.set_fallback_mode("warn")
    ns.clear_op_tracking()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.erfinv(x)
        torch.erfinv(x)
    assert sum(ERFINV in str(w.message) for w in caught) == 1
    assert ns.get_fallback_ops() == {ERFINV: 2}

    ns.set_fallback_mode("allow")
    torch.testing.assert_close(torch.erfinv(x).cpu(), torch.erfinv(x.cpu()))
    with pytest.raises(ValueError, match="'strict' is not one of allow, warn, error"):
        ns.set_fallback_mode("strict")


def test_a_fallback_error_keeps_the_cpu_error_type():
    # What PyTorch raises as IndexError on the CPU is an IndexError through the fallback too (a
    # harness comparing error types, and any user's `except IndexError`, rely on it).
    x = torch.rand(3, device="neuron")
    with pytest.raises(IndexError, match="aten::count_nonzero.dim_IntList failed in the CPU fallback: Dimension out"):
        torch.count_nonzero(x, dim=3)
    with pytest.raises(RuntimeError) as plain:  # a plain error stays a plain RuntimeError
        torch.kthvalue(x, 9)
    assert type(plain.value) is RuntimeError and "failed in the CPU fallback" in str(plain.value)


def test_fallback_mode_from_environment():
    from device_helpers import run_python

    result = run_python(
        """
        import torch
        try:
            torch.erfinv(torch.zeros(2, device="neuron"))
        except NotImplementedError as e:
            print("raised:", e)
        """,
        NEURONSIM_FALLBACK="error",
    )
    assert result.returncode == 0, result.stderr
    assert "raised: aten::erfinv.out (float32) is not in the neuron native op set" in result.stdout


def test_data_dependent_shapes():
    x = torch.tensor([0.0, 1.0, 0.0, 2.0], device="neuron")
    ns.set_fallback_mode("error")
    for call, op in [(lambda: torch.nonzero(x), "aten::nonzero"),
                     (lambda: x[x > 0], "aten::index.Tensor"),
                     (lambda: torch.masked_select(x, x > 0), "aten::masked_select"),
                     (lambda: torch.unique(x), "aten::_unique2")]:
        with pytest.raises(NotImplementedError, match="data-dependent output shape") as info:
            call()
        assert op in str(info.value)
    ns.set_fallback_mode("allow")
    ns.clear_op_tracking()
    assert torch.equal(x[x > 0].cpu(), torch.tensor([1.0, 2.0]))
    assert torch.equal(torch.nonzero(x).cpu(), torch.tensor([[1], [3]]))
    fallback = ns.get_fallback_ops()
    assert fallback["aten::index.Tensor"] == 1 and fallback["aten::nonzero"] == 1
    assert "aten::index.Tensor" not in ns.get_executed_ops()
    idx = torch.tensor([3, 1], device="neuron")
    assert torch.equal(x[idx].cpu(), torch.tensor([2.0, 1.0]))  # integer indexing stays native
    assert ns.get_executed_ops()["aten::index.Tensor"] == 1


def test_float64_downcast_loses_precision_like_the_device():
    cpu = torch.tensor([1.0 + 1e-10, 3.0], dtype=torch.float64)
    dev = cpu.to("neuron")
    result = dev * 1.0
    assert result.dtype == torch.float64 and result.device.type == "neuron"
    assert result.cpu()[0].item() == 1.0  # float32 rounding, as on Trainium
    assert (cpu * 1.0)[0].item() != 1.0
    assert torch.sum(dev, dtype=torch.float64).dtype == torch.float64


def test_int64_wraps_at_32_bits_like_the_device():
    big = torch.tensor([2**31 - 1, 5], dtype=torch.int64, device="neuron")
    result = big + 1
    assert result.dtype == torch.int64
    assert result.cpu().tolist() == [-(2**31), 6]
    assert torch.cumsum(torch.full((3,), 2**30, dtype=torch.int64, device="neuron"), 0).cpu().tolist() == [
        2**30, -(2**31), -(2**30)]
    in_place = torch.tensor([2**31 - 1], dtype=torch.int64, device="neuron")
    in_place.add_(1)
    assert in_place.cpu().tolist() == [-(2**31)]


def test_64bit_error_mode():
    ns.set_64bit_mode("error")
    with pytest.raises(NotImplementedError, match=r"aten::add.Tensor: float64 is not supported on neuron"):
        torch.ones(2, dtype=torch.float64).to("neuron") + torch.ones(2, dtype=torch.float64).to("neuron")
    with pytest.raises(NotImplementedError, match="aten::mul.Tensor: int64 is not supported"):
        torch.ones(2, dtype=torch.int64).to("neuron") * torch.ones(2, dtype=torch.int64).to("neuron")
    with pytest.raises(NotImplementedError, match="float64"):
        torch.ones(2, dtype=torch.float64, device="neuron")  # the fill is an op too
    assert (torch.ones(2, device="neuron") + 1).dtype == torch.float32


def test_matmul_modes():
    torch.manual_seed(0)
    a, b = torch.randn(16, 32), torch.randn(32, 8)
    da, db = a.to("neuron"), b.to("neuron")
    exact = (da @ db).cpu()
    torch.testing.assert_close(exact, a @ b)
    ns.set_matmul_mode("bf16")
    rounded = (da @ db).cpu()
    assert rounded.dtype == torch.float32
    expected = a.bfloat16().float() @ b.bfloat16().float()
    torch.testing.assert_close(rounded, expected)
    assert not torch.equal(rounded, exact)
    torch.testing.assert_close((da + 1).cpu(), a + 1)  # elementwise ops unaffected


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_16_bit_matmuls_accumulate_in_float32(dtype):
    # Trainium multiplies 16-bit inputs exactly and sums in float32 (PSUM), rounding once: the
    # device computes on float32 copies, whatever the CPU's own 16-bit kernel does (on a CPU
    # without AVX-512 it is a slow scalar loop).
    torch.manual_seed(0)
    a, b, bias = torch.randn(64, 300, dtype=dtype), torch.randn(300, 48, dtype=dtype), torch.randn(48, dtype=dtype)
    da, db, dbias = a.to("neuron"), b.to("neuron"), bias.to("neuron")
    exact = lambda r: r.to(dtype)  # noqa: E731  (one rounding of the float32 result)
    for got, want in [(da @ db, exact(a.float() @ b.float())),
                      (torch.addmm(dbias, da, db, beta=0.5, alpha=2.0),
                       exact(torch.addmm(bias.float(), a.float(), b.float(), beta=0.5, alpha=2.0))),
                      (torch.bmm(da[None], db[None]), exact(a.float()[None] @ b.float()[None])),
                      (torch.mv(da, db[:, 0]), exact(a.float() @ b.float()[:, 0])),
                      (torch.dot(da[0], db[:, 0]), exact(a.float()[0] @ b.float()[:, 0]))]:
        assert got.dtype == dtype and got.device.type == "neuron"
        assert torch.equal(got.cpu(), want)
    # what writes into an argument runs the kernel as it is: still right, in the argument's dtype
    out = torch.empty(64, 48, dtype=dtype, device="neuron")
    torch.mm(da, db, out=out)
    torch.testing.assert_close(out.cpu(), a @ b)
    acc = dbias.expand(64, 48).clone()
    acc.addmm_(da, db)
    torch.testing.assert_close(acc.cpu(), torch.addmm(bias, a, b))
    with pytest.raises(RuntimeError, match="dtype"):
        da @ db.float()  # mixed dtypes are refused as the CPU refuses them


def test_complex_is_rejected():
    z = torch.ones(2, dtype=torch.complex64).to("neuron")  # storage and copies are fine
    assert z.cpu().dtype == torch.complex64
    with pytest.raises(NotImplementedError, match="aten::add.Tensor: complex64 is not supported on neuron"):
        z + z
    with pytest.raises(NotImplementedError, match="complex arithmetic"):
        torch.angle(z)  # outside the native set: rejected on the fallback path too


def test_sparse_is_rejected():
    dense = torch.eye(3, device="neuron")
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported on neuron"):
        dense.to_sparse()
    indices = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported on neuron"):
        torch.sparse_coo_tensor(indices, torch.ones(2), (2, 2), device="neuron")


def test_forward_ad_is_rejected():
    x = torch.randn(3, device="neuron")
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="forward-mode AD .* not supported on neuron"):
            fwAD.make_dual(x, torch.ones_like(x))
    with fwAD.dual_level():  # CPU forward AD is untouched
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        assert fwAD.unpack_dual(dual * 2).tangent.tolist() == [2.0, 2.0]


def test_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    real = torch.randn(4, 8, device="neuron")
    with FakeTensorMode() as mode:
        x = torch.empty(4, 8, device="neuron")
        y = (x @ x.T).softmax(-1)[:, 1:].transpose(0, 1).reshape(-1)
        assert y.device == torch.device("neuron", 0) and y.shape == (12,)
        fake = mode.from_tensor(real)
        z = torch.nn.functional.linear(fake, torch.empty(3, 8, device="neuron"))
        assert z.device.type == "neuron" and z.shape == (4, 3)


def test_meta_module_materialised_on_device():
    layer = torch.nn.Linear(4, 3, device="meta")
    layer.to_empty(device="neuron")
    assert layer.weight.device.type == "neuron"
    torch.nn.init.zeros_(layer.weight)
    torch.nn.init.ones_(layer.bias)
    assert torch.equal(layer(torch.ones(2, 4, device="neuron")).cpu(), torch.ones(2, 3))


SAME_DEVICE = "Expected all tensors to be on the same device"


@pytest.mark.parametrize("call", [
    lambda d0, d1: torch.add(d0, torch.ones(3)),  # native, boxed
    lambda d0, d1: torch.cat([d0, torch.ones(3)]),  # a list argument
    lambda d0, d1: torch.polar(d0, torch.ones(3)),  # the CPU fallback
    lambda d0, d1: d0 + d1,  # two device indices
    lambda d0, d1: torch.mm(d0.reshape(3, 1), d1.reshape(1, 3)),
    lambda d0, d1: torch.tensor(1.0).mul_(d0),  # a CPU scalar is read, never written
    lambda d0, d1: torch.ops.aten.soft_margin_loss(torch.tensor(0.5), d0[0], 1),  # (this once crashed)
], ids=["add", "cat", "through_the_cpu_fallback", "two_indices", "mm", "cpu_self", "composite_writes_cpu"])
def test_operands_on_two_devices_are_refused_as_cuda_refuses_them(call):
    d0, d1 = torch.ones(3, device="neuron:0"), torch.ones(3, device="neuron:1")
    for _ in range(3):  # a warm direct kernel too
        d0 + d0
        torch.mm(d0.reshape(3, 1), d0.reshape(1, 3))
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        call(d0, d1)


def test_a_cpu_scalar_and_cpu_indices_are_taken_beside_device_tensors():
    d = torch.arange(4.0, device="neuron")
    assert torch.equal((d * torch.tensor(2.0)).cpu(), torch.arange(4.0) * 2)
    assert torch.equal(d[torch.tensor([1, 3])].cpu(), torch.tensor([1.0, 3.0]))
    d.index_put_((torch.tensor([0]),), torch.tensor(9.0))
    assert d.cpu()[0] == 9


def test_an_out_that_is_an_input_stays_one_tensor_for_the_cpu_kernel():
    # cat's overlap check knows an out= that *is* an input, even empty (native); atan2 refuses to
    # resize an out= it also reads (through the CPU fallback, which copied each argument apart)
    a, b = torch.empty(0, device="neuron"), torch.ones(2, device="neuron")
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat([a, b], out=a)
    x, s = torch.ones(5, device="neuron"), torch.tensor(2.0, device="neuron")
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.atan2(x, s, out=s)
    y = torch.ones(5, device="neuron")
    torch.atan2(y, x, out=y)  # the same shape: allowed, computed in place
    assert torch.allclose(y.cpu(), torch.atan2(torch.ones(5), torch.ones(5)))


@pytest.mark.parametrize("op", [torch.logaddexp, torch.add, torch.atan2])
def test_an_out_that_overlaps_itself_is_refused_as_the_cpu_refuses_it(op):
    # an expanded out= (several elements in one place): TensorIterator refuses to write it, on
    # the CPU and on CUDA; the device must not hand the kernel a dense copy that hides it (found
    # by the fuzz suite: logaddexp through the CPU fallback)
    x = torch.ones(5, 1)
    with pytest.raises(RuntimeError, match="single memory location") as on_cpu:
        op(x, torch.ones(5), out=torch.zeros(1, 1).expand(5, 1))
    d = x.to("neuron")
    with pytest.raises(type(on_cpu.value), match="single memory location"):
        op(d, torch.ones(5, device="neuron"), out=torch.zeros(1, 1, device="neuron").expand(5, 1))
    out = torch.zeros(5, 5, device="neuron")  # a dense out= of the broadcast shape: written
    op(d, torch.ones(5, device="neuron"), out=out)
    assert torch.allclose(out.cpu(), op(x, torch.ones(5)))


EMPTY_SLICE = """
import torch, torch_neuronsim
base = torch.randn(20, 20, 20, device="neuron")
src = torch.randn(20, 20, 20, device="neuron").narrow(0, 0, 0)
out = torch.full((20, 20, 20), float("nan"), device="neuron").narrow(0, 0, 0)
print(tuple(torch.slice_scatter(base.narrow(0, 0, 0), src, 1, 0, 20, 1, out=out).shape))
"""


def test_an_empty_slice_of_a_larger_tensor_reaches_kernels_that_read_its_whole_storage():
    """A tensor of no elements has a null data_ptr() even where its storage has bytes (an empty
    slice); the engine's CPU view of it must address that storage (slice_scatter's
    clone_preserve_strides reads all of it), not address 0 (a segfault, found by the fuzz suite)."""
    from device_helpers import run_python

    ran = run_python(EMPTY_SLICE)
    assert ran.returncode == 0 and ran.stdout.strip() == "(0, 20, 20)", (ran.returncode, ran.stderr[-2000:])


def test_host_only_kernels_copy_to_the_host_and_back():
    """searchsorted and bucketize are registered kernels that compute on the host (TorchNeuron's
    "Host-only"): right results, on the device, tracked as the backend's own kernels."""
    import torch_neuronsim as ns

    assert set(ns._C.host_only_ops()) == {"aten::searchsorted.Tensor", "aten::searchsorted.Scalar",
                                          "aten::bucketize.Tensor", "aten::bucketize.Scalar"}
    boundaries = torch.tensor([1.0, 3.0, 5.0, 7.0])
    values = torch.tensor([[0.5, 3.0], [6.0, 9.0]])
    ns.clear_op_tracking()
    got = torch.searchsorted(boundaries.to("neuron"), values.to("neuron"), right=True)
    buckets = torch.bucketize(values.to("neuron"), boundaries.to("neuron"))
    assert got.device.type == "neuron" and buckets.device.type == "neuron"
    assert torch.equal(got.cpu(), torch.searchsorted(boundaries, values, right=True))
    assert torch.equal(buckets.cpu(), torch.bucketize(values, boundaries))
    executed = ns.get_executed_ops()
    assert executed.get("aten::searchsorted.Tensor") == 1 and executed.get("aten::bucketize.Tensor") == 1
    assert not ns.get_fallback_ops()


def test_a_python_scalar_and_a_0_dim_tensor_are_different_signatures():
    """A wrapped number (a Python scalar) promotes as a scalar, a 0-dim CPU tensor as a tensor:
    the two calls compile apart, so a queued op's result dtype (known at compile time) is each
    one's own, whichever came first."""
    a = torch.tensor([3, 4]).to("neuron")
    assert (a * torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float64
    assert (a * 2.0).dtype == torch.float32
    assert (a * 2.0).cpu().tolist() == [6.0, 8.0]


def test_a_host_only_kernel_refuses_operands_on_two_devices():
    boundaries = torch.tensor([1.0, 3.0, 5.0])
    with pytest.raises(RuntimeError, match="same device"):
        torch.bucketize(torch.tensor([2.0]).to("neuron"), boundaries)
