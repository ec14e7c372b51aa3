#include "tensorkit/dense/external.h"

#include <dlpack/dlpack.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

TEST(ExternalTest, WrapSharesMemoryAndRunsDeleterOnce) {
  std::vector<float> buf = {0, 1, 2, 3, 4, 5};
  int deleted = 0;
  {
    Tensor t = WrapExternal(buf.data(), {2, 3}, {}, DType::kFloat32, Device::Cpu(),
                            [&](void*) { ++deleted; });
    EXPECT_EQ(t.ToVector<float>(), buf);
    t.data<float>()[4] = 40;  // writes land in the host buffer
    EXPECT_EQ(buf[4], 40);
    Tensor copy = t;
    EXPECT_TRUE(SharesStorage(copy, t));
  }
  EXPECT_EQ(deleted, 1);
}

TEST(ExternalTest, NegativeStridesAreRebased) {
  std::vector<int32_t> buf = {0, 1, 2, 3, 4, 5};
  // Start at the last element and walk backwards: [5 4 3 2 1 0] viewed as [2 3].
  Tensor t = WrapExternal(buf.data() + 5, {2, 3}, {-3, -1}, DType::kInt32, Device::Cpu());
  EXPECT_EQ(t.ToVector<int32_t>(), (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(t.Strides(), (std::vector<int64_t>{-3, -1}));
}

TEST(ExternalTest, ExpandedViewsAreRejected) {
  std::vector<float> buf(3);
  try {
    WrapExternal(buf.data(), {4, 3}, {0, 1}, DType::kFloat32, Device::Cpu());
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("WrapExternal"));
    EXPECT_THAT(e.what(), HasSubstr("stride 0"));
  }
  // Dim-1 axes may carry any stride: it is normalised to 0.
  Tensor t = WrapExternal(buf.data(), {1, 3}, {99, 1}, DType::kFloat32, Device::Cpu());
  EXPECT_EQ(t.Stride(0), 0);
}

// NumPy's empty arrays carry stride 0 on the axes in front of a dim 0 (np.empty((3, 0, 2)) has
// byte strides (0, 16, 8)): nothing is addressed, so such strides are normalised, not refused.
TEST(ExternalTest, EmptyTensorsTakeAnyStrides) {
  float x = 0;
  int deleted = 0;
  {
    Tensor t = WrapExternal(&x, {3, 0, 2}, {0, 2, 1}, DType::kFloat32, Device::Cpu(),
                            [&](void*) { ++deleted; });
    EXPECT_EQ(t.Dims(), (std::vector<int64_t>{3, 0, 2}));
    EXPECT_EQ(t.NumElements(), 0);
    EXPECT_EQ(t.Strides(), DefaultPattern({3, 0, 2}).Strides());
    EXPECT_EQ(t.HostContiguous().NumElements(), 0);
  }
  EXPECT_EQ(deleted, 1);
  // Negative and expanded strides alike, and through DLPack.
  Tensor n = WrapExternal(&x, {0, 4}, {-7, 0}, DType::kInt32, Device::Cpu());
  EXPECT_EQ(n.Strides(), DefaultPattern({0, 4}).Strides());
  int64_t shape[2] = {5, 0}, strides[2] = {0, 0};
  DLManagedTensor m{};
  m.dl_tensor.data = &x;
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = 2;
  m.dl_tensor.dtype = {kDLFloat, 32, 1};
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  Tensor d = FromDLPack(&m);
  EXPECT_EQ(d.Dims(), (std::vector<int64_t>{5, 0}));
  // The length check still holds for empty tensors.
  EXPECT_THROW(WrapExternal(&x, {0, 2}, {1}, DType::kFloat32, Device::Cpu()), Error);
}

TEST(ExternalTest, DLPackRoundTrip) {
  Tensor t = Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  DLManagedTensor* m = ToDLPack(t);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 64);
  EXPECT_EQ(m->dl_tensor.shape[0], 3);
  Tensor back = FromDLPack(m);                   // takes ownership of m
  EXPECT_TRUE(SharesStorage(back, t) == false);  // a new Storage wrapping the same memory
  EXPECT_EQ(back.raw_data(), t.raw_data());
  EXPECT_EQ(back.ToVector<int64_t>(), t.ToVector<int64_t>());
  EXPECT_EQ(back.dtype(), DType::kInt64);
}

TEST(ExternalTest, DLPackBadDTypeCallsDeleterAndThrows) {
  static int deleted = 0;
  deleted = 0;
  std::vector<float> buf(4);
  int64_t shape[1] = {4};
  DLManagedTensor m{};
  m.dl_tensor.data = buf.data();
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = {kDLComplex, 64, 1};
  m.dl_tensor.shape = shape;
  m.deleter = [](DLManagedTensor*) { ++deleted; };
  EXPECT_THROW(FromDLPack(&m), Error);
  EXPECT_EQ(deleted, 1);
  EXPECT_THROW(ToDLPack(Tensor::FromVector<std::string>({"a"})), Error);
}

}  // namespace
}  // namespace tensorkit
