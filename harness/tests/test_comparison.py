"""harness/worker/comparison.py: what counts as the device differing from the CPU, with which
errors, and how inputs reach the device."""

from __future__ import annotations

import math
import sys

import pytest
import torch

from conform_cli import REPO

sys.path.insert(0, str(REPO / "harness" / "worker"))
from comparison import Mismatch, compare, errors, own_copy, to_device  # noqa: E402

NAN, INF = math.nan, math.inf


def test_a_mismatch_carries_its_largest_errors():
    actual, expected = torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 2.5, 4.0])
    with pytest.raises(Mismatch, match="Tensor-likes are not close") as raised:
        compare(actual, expected, rtol=0, atol=0.1)
    assert (raised.value.max_abs, raised.value.max_rel) == (0.5, 0.2)
    assert compare(actual, expected, rtol=0, atol=1) == (0.5, 0.2)  # within tolerance: the errors still come back
    # |expected| is clamped to float64's smallest normal number: a difference where the CPU has 0 overflows to inf,
    # and stays a float
    assert compare(torch.tensor([5.0]), torch.tensor([0.0]), rtol=0, atol=10) == (5.0, INF)


def test_nan_where_the_cpu_has_nan_matches_and_nan_against_a_number_does_not():
    assert compare(torch.tensor([NAN, INF, 1.0, 2.0]), torch.tensor([NAN, INF, 1.0, 2.25]), rtol=0, atol=1) == \
        (0.25, 0.25 / 2.25)  # errors over the elements finite on both sides
    for device_value in (NAN, INF):
        with pytest.raises(Mismatch) as raised:
            compare(torch.tensor([device_value, 1.0]), torch.tensor([3.0, 1.5]), rtol=0, atol=0)
        assert (raised.value.max_abs, raised.value.max_rel) == (0.5, 0.5 / 1.5)
    with pytest.raises(Mismatch, match="non-tensor output nan != 1.0"):
        compare([NAN], [1.0], rtol=0, atol=0)
    assert compare([NAN, 2], [NAN, 2], rtol=0, atol=0) == (0.0, 0.0)


def test_complex_values_are_compared_as_real_and_imaginary_parts():
    assert compare(torch.tensor([1 + 2j]).conj(), torch.tensor([1 - 2j]), rtol=0, atol=0) == (0.0, 0.0)
    with pytest.raises(Mismatch) as raised:
        compare(torch.tensor([1 + 2j, 3 + 0j]), torch.tensor([1 + 2.5j, 3 + 0j]), rtol=0, atol=0)
    assert (raised.value.max_abs, raised.value.max_rel) == (0.5, 0.2)
    assert errors(torch.tensor([4 + 1j]), torch.tensor([4 + 1j]).conj()) == (2.0, 2.0)


def test_structure_type_and_shape_mismatches_cannot_be_measured():
    t = torch.zeros(2)
    cases = [(((t, t), [t, t]), "output structure differs"),
             (([t, t], [t]), "output structure differs"),
             (([t, 1], [t, t]), "expected a tensor, got int"),
             (([t, t], [t, 1]), "expected int, got a tensor"),
             ((torch.zeros(3, 2), torch.zeros(2, 3)), r"shape \[3, 2\] on the device, \[2, 3\] on the CPU")]
    for (actual, expected), message in cases:
        with pytest.raises(Mismatch, match=message) as raised:
            compare(actual, expected, rtol=1, atol=1)
        assert (raised.value.max_abs, raised.value.max_rel) == (INF, INF)


def test_without_values_only_structure_shapes_and_dtypes_count():
    garbage, other = torch.full((2, 3), 7.0), torch.zeros(2, 3)
    with pytest.raises(Mismatch):
        compare(garbage, other, rtol=0, atol=0)
    assert compare(garbage, other, rtol=0, atol=0, values=False) == (0.0, 0.0)
    assert compare([garbage, 1], [other, 2], rtol=0, atol=0, values=False) == (0.0, 0.0)
    with pytest.raises(Mismatch, match=r"expected float32\[2, 3\], got float64\[2, 3\]"):
        compare(garbage.double(), other, rtol=0, atol=0, values=False)
    with pytest.raises(Mismatch, match=r"expected float32\[2, 3\], got float32\[6\]"):
        compare(garbage.flatten(), other, rtol=0, atol=0, values=False)
    with pytest.raises(Mismatch, match="output structure differs"):
        compare([garbage], [other, other], rtol=0, atol=0, values=False)


def test_a_partial_view_reaches_the_device_with_its_whole_storage():
    import torch_neuronsim  # noqa: F401  (registers the neuron device)
    from torch.testing._internal.opinfo.core import SampleInput

    base = torch.arange(12.0).requires_grad_()
    view = base[3:7]
    sample = to_device(SampleInput(view, args=(view[1:],), kwargs={"scale": 2.0}), "neuron")
    moved = sample.input
    assert moved.device.type == "neuron" and moved.is_leaf and moved.requires_grad
    assert (moved.storage_offset(), moved.stride(), moved.shape) == (3, (1,), view.shape)
    assert moved.untyped_storage().nbytes() == base.untyped_storage().nbytes()
    assert torch.equal(moved.detach().cpu(), view.detach())
    # as_strided sees the storage around the view: the same elements as on the CPU
    assert torch.equal(moved.detach().as_strided((12,), (1,), 0).cpu(), base.detach())
    assert sample.args[0].storage_offset() == 4 and sample.kwargs == {"scale": 2.0}
    tree = to_device({"ids": torch.ones(2, 3, dtype=torch.long), "n": 3}, "neuron")
    assert tree["ids"].device.type == "neuron" and not tree["ids"].requires_grad and tree["n"] == 3


@pytest.mark.parametrize("kind", ["python", "native"])
def test_the_harness_s_transfers_are_not_ops_the_case_ran(kind):
    """Moving a case's inputs to the device and its results back is the harness's work: the
    dispatcher capture (either implementation) counts the op under test and nothing of the moves,
    in every layout."""
    import torch_neuronsim  # noqa: F401  (registers a device; the capture takes its name from PrivateUse1)
    from dispatch_capture import Capture
    from native_capture import NativeCapture, load
    from vocabulary import Route

    device = torch._C._get_privateuse1_backend_name()
    base = torch.arange(24.0).reshape(4, 6)
    capture = Capture(device) if kind == "python" else NativeCapture(load()[0])
    with capture:
        for x in (base, base.t(), base[1:3], base.expand(2, 4, 6), base[:, ::2]):
            moved = to_device((x, x), device)
            result = torch.neg(moved[0])
            compare(result, torch.neg(x), rtol=0, atol=0)
    seen = {op for counts in capture.counts.values() for op in counts}
    assert seen == {"aten::neg"} and capture.counts[Route.NATIVE]["aten::neg"] == 5


def test_inputs_sharing_storage_share_it_on_the_device():
    import torch_neuronsim  # noqa: F401  (registers the neuron device)
    from torch.testing._internal.opinfo.core import SampleInput

    x = torch.arange(6.0)
    sample = to_device(SampleInput([x, x[:3]], kwargs={"out": x}), "neuron")
    storages = {t.untyped_storage().data_ptr() for t in [*sample.input, sample.kwargs["out"]]}
    assert len(storages) == 1 and sample.input[1].shape == (3,)
    apart = to_device([torch.ones(3), torch.ones(3)], "neuron")
    assert apart[0].untyped_storage().data_ptr() != apart[1].untyped_storage().data_ptr()
    # so the device sees the overlap the CPU sees, and refuses it alike (the engine stages the
    # out= and the inputs it overlaps over one copy of their storage)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat([x, x[:3]], out=x)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat(sample.input, out=sample.kwargs["out"])
    y = to_device(torch.arange(4.0), "neuron")
    torch.add(y, 1, out=y)  # an out= that is exactly its input is allowed on both sides
    assert torch.equal(y.cpu(), torch.arange(4.0) + 1)


def test_tensors_nested_anywhere_in_a_sample_are_moved_with_their_sharing_and_requires_grad():
    import torch_neuronsim  # noqa: F401  (registers the neuron device)
    from torch.testing._internal.opinfo.core import SampleInput

    x, y = torch.rand(3, requires_grad=True), torch.rand(4)
    sample = SampleInput(x, args=([2, (y[1:], {"k": y})],), kwargs={"weights": {"w": [x]}})
    for moved, where in ((to_device(sample, "neuron"), "neuron"), (own_copy(sample), "cpu")):
        view, whole = moved.args[0][1][0], moved.args[0][1][1]["k"]
        assert moved.input.device.type == where and moved.input.is_leaf and moved.input.requires_grad
        assert moved.input is not x and moved.kwargs["weights"]["w"][0] is moved.input
        assert whole is not y and not whole.requires_grad and moved.args[0][0] == 2
        # a view and its base, three levels down, still share one storage
        assert view.untyped_storage().data_ptr() == whole.untyped_storage().data_ptr() != y.data_ptr()
        assert view.storage_offset() == 1 and torch.equal(view.detach().cpu(), y[1:])


def test_one_tensor_in_two_places_stays_one_tensor_and_the_cpu_works_on_its_own_copy():
    import torch_neuronsim  # noqa: F401  (registers the neuron device)
    from torch.testing._internal.opinfo.core import SampleInput

    # identity: cat([a, b], out=a) with `a` empty shares no storage, only identity, and the CPU
    # refuses it as an overlap; moved, it must still be one tensor, or the device sees no overlap
    a, b, x = torch.empty(0), torch.ones(2), torch.ones(3)
    for moved in (to_device(SampleInput([a, b], kwargs={"out": a}), "neuron"),
                  own_copy(SampleInput([a, b], kwargs={"out": a}))):
        assert moved.input[0] is moved.kwargs["out"] and moved.input[0] is not a
        with pytest.raises(RuntimeError, match="single memory location"):
            torch.cat(moved.input, out=moved.kwargs["out"])
    twice = to_device([x, x, x.clone()], "neuron")
    assert twice[0] is twice[1] and twice[0] is not twice[2]
    # own copy: what the CPU writes into its copy (cat's out= resized before it raises) never
    # reaches the inputs the device is given
    copy = own_copy(SampleInput([a, b], kwargs={"out": a}))
    with pytest.raises(RuntimeError):
        torch.cat(copy.input, out=copy.kwargs["out"])
    assert copy.kwargs["out"].shape == (2,) and a.shape == (0,)  # cat resized its out= before refusing
    view = torch.arange(6.0)[1:4]
    copy = own_copy(SampleInput(view, args=(view,)))
    copy.input.add_(1)
    assert torch.equal(view, torch.arange(1.0, 4.0)) and copy.args[0] is copy.input
    assert copy.input.untyped_storage().nbytes() == view.untyped_storage().nbytes()  # its layout kept
    assert (copy.input.storage_offset(), copy.input.stride()) == (1, (1,))


def test_every_layout_reaches_the_device_with_its_strides():
    import torch_neuronsim  # noqa: F401  (registers the neuron device)
    from torch.testing._internal.common_utils import noncontiguous_like

    base = torch.arange(12.0).reshape(3, 4)
    layouts = {
        "transposed": base.t(),
        "expanded": torch.arange(3.0).reshape(3, 1).expand(3, 4),
        "sliced": base[:, ::2],
        "noncontiguous_like": noncontiguous_like(base),
        "conjugated": torch.complex(base, -base).t().conj(),
    }
    for name, t in layouts.items():
        moved = to_device(t, "neuron")
        assert (moved.shape, moved.stride(), moved.storage_offset()) == (t.shape, t.stride(), t.storage_offset()), name
        assert moved.is_conj() == t.is_conj(), name
        assert torch.equal(moved.cpu().resolve_conj(), t.resolve_conj()), name
    plain = to_device(base, "neuron")  # a contiguous tensor is copied as it is
    assert plain.is_contiguous() and plain.untyped_storage().nbytes() == base.untyped_storage().nbytes()


def test_identical_results_take_the_fast_path_and_nan_does_not():
    t = torch.tensor([1.0, -0.0, INF])
    assert compare(t, t.clone(), rtol=0, atol=0) == (0.0, 0.0)
    assert compare(torch.tensor([0.0]), torch.tensor([-0.0]), rtol=0, atol=0) == (0.0, 0.0)
    with pytest.raises(Mismatch, match="dtype"):  # equal values of another dtype are still a mismatch
        compare(t.double(), t, rtol=0, atol=0)
    half = torch.zeros(2, dtype=torch.complex32)  # no CPU equal kernel: the full comparison
    assert compare(half, half.clone(), rtol=0, atol=0) == (0.0, 0.0)
    assert compare(torch.tensor([NAN, 1.0]), torch.tensor([NAN, 1.5]), rtol=0, atol=1) == (0.5, 0.5 / 1.5)


def test_low_precision_is_judged_against_a_float64_reference_three_ways():
    # A fixed rtol passes a kernel that loses bits on small values and fails a faithful kernel on an
    # ill-conditioned input; the device's error measured against the CPU's own at the same dtype does
    # neither (comparison.three_way: 4 times the CPU's normwise, 8 times at an element).
    from comparison import Accuracy, three_way

    reference = torch.linspace(-1, 1, 101, dtype=torch.float64) * 1e-4
    cpu = reference.to(torch.bfloat16)
    lossy = (reference * 1.05).to(torch.bfloat16)  # 5 % off, every value: within the atol of 1e-5 at this size
    compare(lossy, cpu, rtol=1.6e-2, atol=1e-5)  # a fixed tolerance takes it
    with pytest.raises(Mismatch, match="three-way at bfloat16 against a float64 reference"):
        three_way(lossy, cpu, reference, Accuracy())
    # ill-conditioned: the CPU itself is far off the reference; a device as far off passes
    wide = torch.tensor([1000.0, -999.5, 0.5], dtype=torch.float64)
    cpu_wide, device_wide = torch.tensor([1000.0, -1000.0, 0.0], dtype=torch.bfloat16), \
        torch.tensor([1000.0, -1000.0, 0.5], dtype=torch.bfloat16)
    with pytest.raises(Mismatch):
        compare(device_wide, cpu_wide, rtol=1.6e-2, atol=1e-5)  # 0.5 where the CPU gives 0: rtol fails it
    accuracy = Accuracy()
    three_way(device_wide, cpu_wide, wide, accuracy)
    assert accuracy.judged == 1 and accuracy.reference_dtype == "float64" and accuracy.device_error <= accuracy.cpu_error
    # where the CPU has NaN or an infinity, the device must have the same
    with pytest.raises(Mismatch, match="not finite"):
        three_way(torch.tensor([1.0, 2.0], dtype=torch.bfloat16), torch.tensor([NAN, 2.0], dtype=torch.bfloat16),
                  torch.tensor([NAN, 2.0], dtype=torch.float64), Accuracy())
    # through compare(): the reference is asked for only where a low-precision part differs
    asked = []
    reference_call = lambda: asked.append(1) or reference  # noqa: E731
    compare(cpu, cpu, rtol=0, atol=0, reference=reference_call)
    assert not asked
    with pytest.raises(Mismatch, match="three-way"):
        compare(lossy, cpu, rtol=1.6e-2, atol=1e-5, reference=reference_call)
    assert asked == [1]
    compare(lossy, cpu, rtol=1.6e-2, atol=1e-5, reference=reference_call, fixed_too=True)  # a reviewed override
