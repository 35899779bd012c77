"""A device-generic test file in PyTorch's own style, for the upstream suite's tests (it stands in
for test_view_ops.py and its kind, which need a PyTorch checkout). Run as upstream runs it:
instantiate_device_type_tests makes TestGenericNEURON for the device.

Planted, each with the outcome the upstream suite must record:
  test_add (float32, int64)          pass
  test_device_type (no dtype)        pass
  test_parametrized (n=1, n=4)       pass
  test_op_neg (an OpInfo test)       pass
  test_erfinv                        fallback (the bundled backend runs erfinv on the CPU)
  test_planted_failure               fail (an assertion of the test)
  test_planted_error                 error (the test raises)
  test_planted_crash                 crash (the worker dies of SIGSEGV)
  test_cuda_only                     skip (@onlyCUDA: "Only runs on cuda")
  test_skips_itself                  skip (self.skipTest)
TestCpuOnly is not device-generic: it is no case.
"""

import os
import signal

import torch
from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests, onlyCUDA, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase, parametrize, run_tests


class TestGeneric(TestCase):
    @dtypes(torch.float32, torch.int64)
    def test_add(self, device, dtype):
        a = torch.arange(6, dtype=dtype).reshape(2, 3)
        self.assertEqual((a.to(device) + a.to(device)).cpu(), a + a)

    def test_device_type(self, device):
        self.assertEqual(torch.empty(1, device=device).device.type, torch.device(device).type)

    @parametrize("n", [1, 4])
    def test_parametrized(self, device, n):
        self.assertEqual(torch.ones(n, device=device).sum().item(), n)

    @ops([op for op in op_db if op.name == "neg"], allowed_dtypes=(torch.float32,))
    def test_op(self, device, dtype, op):
        for sample in op.sample_inputs("cpu", dtype):
            expected = op(sample.input, *sample.args, **sample.kwargs)
            actual = op(sample.input.to(device), *sample.args, **sample.kwargs)
            self.assertEqual(actual.cpu(), expected)

    @dtypes(torch.float32)
    def test_erfinv(self, device, dtype):
        x = torch.linspace(-0.9, 0.9, 7, dtype=dtype)
        self.assertEqual(torch.erfinv(x.to(device)).cpu(), torch.erfinv(x))

    @dtypes(torch.float32)
    def test_planted_failure(self, device, dtype):
        self.assertEqual(torch.ones(3, device=device, dtype=dtype).sum().item(), 4.0,
                         msg="planted: three ones do not sum to four")

    def test_planted_error(self, device):
        raise RuntimeError("planted: the test raises")

    @dtypes(torch.float32)
    def test_planted_crash(self, device, dtype):
        os.kill(os.getpid(), signal.SIGSEGV)

    @onlyCUDA
    def test_cuda_only(self, device):
        pass

    def test_skips_itself(self, device):
        self.skipTest("planted: upstream-style skip")


instantiate_device_type_tests(TestGeneric, globals())


class TestCpuOnly(TestCase):
    def test_cpu(self):
        self.assertEqual(torch.ones(1).item(), 1)


if __name__ == "__main__":
    run_tests()
