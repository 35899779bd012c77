// Every copy kind: host to device, device to host, across devices, non-contiguous, with a
// storage offset, dtype-converting; plus views sharing storage and .item() per dtype.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace {
const c10::Device kN0("neuron:0");
const c10::Device kN1("neuron:1");
}  // namespace

TEST(Copy, HostToDeviceToHost) {
  auto cpu = at::arange(24, at::kFloat).reshape({2, 3, 4});
  auto dev = cpu.to(kN0);
  EXPECT_EQ(dev.device(), kN0);
  EXPECT_TRUE(at::equal(dev.cpu(), cpu));
}

TEST(Copy, AcrossDevices) {
  auto cpu = at::randn({5, 7});
  auto on1 = cpu.to(kN0).to(kN1);
  EXPECT_EQ(on1.device(), kN1);
  EXPECT_TRUE(at::equal(on1.cpu(), cpu));
}

TEST(Copy, NonContiguousAndOffsetSources) {
  auto cpu = at::arange(60, at::kFloat).reshape({3, 4, 5});
  auto dev = cpu.to(kN0);
  auto transposed = dev.transpose(0, 2);  // non-contiguous view on the device
  EXPECT_FALSE(transposed.is_contiguous());
  EXPECT_TRUE(at::equal(transposed.cpu(), cpu.transpose(0, 2)));
  auto sliced = dev.select(0, 2).narrow(1, 1, 3);  // storage offset
  EXPECT_GT(sliced.storage_offset(), 0);
  EXPECT_TRUE(at::equal(sliced.cpu(), cpu.select(0, 2).narrow(1, 1, 3)));
  // into a non-contiguous device destination
  auto dst = at::zeros({5, 4}, at::TensorOptions().device(kN0)).t();
  dst.copy_(cpu.select(0, 1));
  EXPECT_TRUE(at::equal(dst.cpu(), cpu.select(0, 1)));
}

TEST(Copy, DtypeConverting) {
  auto cpu = at::tensor({1.5, -2.25, 3.0}, at::kDouble);
  auto as_half = at::empty({3}, at::TensorOptions().device(kN0).dtype(at::kHalf));
  as_half.copy_(cpu);
  EXPECT_TRUE(at::equal(as_half.cpu(), cpu.to(at::kHalf)));
  auto as_int = as_half.to(at::kInt);
  EXPECT_EQ(as_int.device(), kN0);
  EXPECT_TRUE(at::equal(as_int.cpu(), cpu.to(at::kInt)));
}

TEST(Copy, ViewsShareStorage) {
  auto dev = at::zeros({4, 4}, at::TensorOptions().device(kN0));
  auto row = dev.view({16}).narrow(0, 4, 4);
  row.fill_(7.0);
  EXPECT_EQ(dev[1].sum().item<float>(), 28.0f);
  auto strided = dev.as_strided({2, 2}, {8, 1}, 1);
  strided.fill_(1.0);
  EXPECT_EQ(dev.cpu()[0][1].item<float>(), 1.0f);
  EXPECT_EQ(dev.cpu()[2][2].item<float>(), 1.0f);
  auto other = at::empty({0}, at::TensorOptions().device(kN0));
  other.set_(dev);
  EXPECT_TRUE(other.is_alias_of(dev));
}

TEST(Copy, ItemForEveryDtype) {
  for (auto dtype : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kInt, at::kLong,
                     at::kShort, at::kChar, at::kByte, at::kBool}) {
    auto t = at::ones({1}, at::TensorOptions().dtype(dtype)).to(kN0);
    EXPECT_EQ(t.item().toDouble(), 1.0) << dtype;
  }
  auto z = at::complex(at::ones({1}), at::full({1}, 2.0)).to(kN0);
  EXPECT_EQ(z.item().toComplexFloat(), c10::complex<float>(1, 2));
}

TEST(Copy, ResizeKeepsData) {
  auto dev = at::arange(4, at::TensorOptions().dtype(at::kFloat)).to(kN0);
  dev.resize_({8});
  EXPECT_EQ(dev.device(), kN0);
  EXPECT_TRUE(at::equal(dev.narrow(0, 0, 4).cpu(), at::arange(4, at::kFloat)));
}
