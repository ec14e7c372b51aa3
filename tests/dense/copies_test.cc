// Dtype conversions of Copy and the dense copies (CopyRows, CopyColumns, Concatenate, Split).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit {
namespace {

using ref::Rng;

// What converting v to D must give, computed through double / int64 independently of the
// library: bool is "!= 0", float to integer truncates and saturates (NaN -> 0), integer to
// integer wraps.
template <typename D, typename S>
D Expected(S v) {
  double d;
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    d = static_cast<float>(v);
  } else {
    d = static_cast<double>(v);
  }
  if constexpr (std::is_same_v<D, bool>) {
    return d != 0;
  } else if constexpr (std::is_integral_v<D>) {
    if constexpr (std::is_integral_v<S>) {
      return static_cast<D>(static_cast<int64_t>(v));
    } else {
      if (std::isnan(d)) return 0;
      const double t = std::trunc(d);
      if (t <= static_cast<double>(std::numeric_limits<D>::min())) {
        return std::numeric_limits<D>::min();
      }
      if (t >= static_cast<double>(std::numeric_limits<D>::max())) {
        return std::numeric_limits<D>::max();
      }
      return static_cast<D>(t);
    }
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(d));
  } else {
    return static_cast<D>(d);
  }
}

template <typename T>
bool SameBits(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return a.bits == b.bits;
  } else {
    return a == b;
  }
}

// Copy from S to D over random strided layouts with broadcasting.
template <typename D, typename S>
void CheckPair(Rng& rng) {
  const std::vector<int64_t> dims = ref::RandomDims(rng, 0, 3, 6);
  std::vector<int64_t> src_dims = dims;
  if (!src_dims.empty()) src_dims[0] = 1;  // broadcast along axis 0
  Tensor src = ref::RandomStridedTensor<S>(rng, src_dims);
  Tensor dest = ref::RandomStridedTensor<D>(rng, dims);
  Copy(src, &dest);
  ref::ForEachIndex(dims, [&](const ref::Index& i) {
    const S v = ref::Get<S>(src, ref::ProjectIndex(src_dims, i));
    EXPECT_TRUE(SameBits(ref::Get<D>(dest, i), Expected<D>(v)))
        << DTypeName(DTypeOf<S>) << " -> " << DTypeName(DTypeOf<D>);
  });
}

template <typename D>
void CheckFrom(Rng& rng) {
  CheckPair<D, bool>(rng);
  CheckPair<D, int8_t>(rng);
  CheckPair<D, uint8_t>(rng);
  CheckPair<D, int16_t>(rng);
  CheckPair<D, int32_t>(rng);
  CheckPair<D, int64_t>(rng);
  CheckPair<D, Half>(rng);
  CheckPair<D, BFloat16>(rng);
  CheckPair<D, float>(rng);
  CheckPair<D, double>(rng);
}

TEST(CopiesTest, CopyEveryNumericDTypePair) {
  Rng rng(1);
  for (int round = 0; round < 3; ++round) {
    CheckFrom<bool>(rng);
    CheckFrom<int8_t>(rng);
    CheckFrom<uint8_t>(rng);
    CheckFrom<int16_t>(rng);
    CheckFrom<int32_t>(rng);
    CheckFrom<int64_t>(rng);
    CheckFrom<Half>(rng);
    CheckFrom<BFloat16>(rng);
    CheckFrom<float>(rng);
    CheckFrom<double>(rng);
  }
}

TEST(CopiesTest, FloatToIntegerSaturates) {
  const float nan = std::nanf("");
  Tensor f = Tensor::FromVector(std::vector<float>{1e10f, -1e10f, nan, 2.9f, -2.9f, 300.f});
  Tensor i = Tensor::Empty({6}, DType::kInt32), u = Tensor::Empty({6}, DType::kUInt8);
  Copy(f, &i);
  Copy(f, &u);
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(i.ToVector<int32_t>(), (std::vector<int32_t>{kMax, kMin, 0, 2, -2, 300}));
  EXPECT_EQ(u.ToVector<uint8_t>(), (std::vector<uint8_t>{255, 0, 0, 2, 0, 255}));
}

// Copy with summation and a dtype change: converted first, summed in the output's dtype.
TEST(CopiesTest, CopyConvertsThenSums) {
  Tensor f = Tensor::FromVector(std::vector<float>{1.5f, 2.5f, -1.5f, 4.0f}, {2, 2});
  Tensor s = Tensor::Empty({1, 2}, DType::kInt32);
  Copy(f, &s);
  EXPECT_EQ(s.ToVector<int32_t>(), (std::vector<int32_t>{0, 6}));
}

// Converted: Copy's conversion into a new C-order tensor, or t itself when nothing changes.
TEST(CopiesTest, ConvertedCopiesOnlyWhenTheDTypeChanges) {
  Tensor f = Tensor::FromVector(std::vector<float>{1.5f, -2.5f, 3.0f, 300.0f, 0.5f, -0.5f}, {2, 3});
  Tensor i = Converted(Transpose(f, 0, 1), DType::kInt8);
  EXPECT_EQ(i.dtype(), DType::kInt8);
  EXPECT_EQ(i.Dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(i.Strides(), (std::vector<int64_t>{2, 1}));
  EXPECT_FALSE(SharesStorage(i, f));
  EXPECT_EQ(i.ToVector<int8_t>(), (std::vector<int8_t>{1, 127, -2, 0, 3, 0}));  // 300 saturates
  Tensor same = Converted(f, DType::kFloat32);
  EXPECT_TRUE(SharesStorage(same, f));
  EXPECT_THROW(Converted(Tensor(), DType::kInt32), Error);
}

TEST(CopiesTest, StringCopyAndConcatenate) {
  Tensor a = Tensor::FromVector(std::vector<std::string>{"a", "bb", "ccc", "d"}, {2, 2});
  Tensor t = Tensor::FromVector(std::vector<std::string>{"", "", "", ""}, {2, 2});
  Copy(Transpose(a, 0, 1), &t);
  EXPECT_EQ(t.ToVector<std::string>(), (std::vector<std::string>{"a", "ccc", "bb", "d"}));
  Tensor c = Concatenate({a, t}, 1);
  EXPECT_EQ(c.Dims(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(c.ToVector<std::string>(),
            (std::vector<std::string>{"a", "bb", "a", "ccc", "ccc", "d", "bb", "d"}));
  Tensor b = Tensor::FromVector(std::vector<std::string>{"x", "y"}, {2, 1});
  Tensor wide = Tensor::FromVector(std::vector<std::string>{"", "", "", ""}, {2, 2});
  Copy(b, &wide);  // broadcasting strings is fine
  EXPECT_EQ(wide.ToVector<std::string>(), (std::vector<std::string>{"x", "x", "y", "y"}));
}

// Concatenate along every axis against naive index arithmetic, with dim-0 pieces.
TEST(CopiesTest, ConcatenateAndSplitRandom) {
  Rng rng(2);
  for (int round = 0; round < 30; ++round) {
    std::vector<int64_t> dims = ref::RandomDims(rng, 1, 4, 4);
    const int axis = std::uniform_int_distribution<int>(0, static_cast<int>(dims.size()) - 1)(rng);
    const int count = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<Tensor> parts;
    std::vector<int64_t> sizes;
    for (int k = 0; k < count; ++k) {
      dims[axis] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
      parts.push_back(ref::RandomStridedTensor<int64_t>(rng, dims));
      sizes.push_back(dims[axis]);
    }
    Tensor c = round % 2 ? Concatenate(parts, axis)
                         : Concatenate(parts, axis - static_cast<int>(dims.size()));
    int64_t offset = 0;
    for (int k = 0; k < count; ++k) {
      ref::ForEachIndex(parts[k].Dims(), [&](const ref::Index& i) {
        ref::Index j = i;
        j[axis] += offset;
        EXPECT_EQ(ref::Get<int64_t>(c, j), ref::Get<int64_t>(parts[k], i));
      });
      offset += sizes[k];
    }
    EXPECT_EQ(c.Dim(axis), offset);
    std::vector<Tensor> back = Split(c, axis, sizes);
    ASSERT_EQ(back.size(), parts.size());
    for (int k = 0; k < count; ++k) {
      EXPECT_EQ(back[k].Dims(), parts[k].Dims());
      EXPECT_EQ(back[k].ToVector<int64_t>(), parts[k].ToVector<int64_t>());
      EXPECT_FALSE(SharesStorage(back[k], c));
    }
  }
}

TEST(CopiesTest, RowsAndColumns) {
  Rng rng(3);
  Tensor t = ref::RandomStridedTensor<float>(rng, {5, 4, 2});
  Tensor rows = CopyRows(t, 1, 4);
  EXPECT_FALSE(SharesStorage(rows, t));
  EXPECT_TRUE(rows.IsContiguous());
  EXPECT_EQ(rows.ToVector<float>(), Slice(t, 0, 1, 4).ToVector<float>());
  Tensor cols = CopyColumns(t, 2, 4);
  EXPECT_EQ(cols.Dims(), (std::vector<int64_t>{5, 2, 2}));
  EXPECT_EQ(cols.ToVector<float>(), Slice(t, 1, 2, 4).ToVector<float>());
  EXPECT_EQ(CopyRows(t, 3, 3).Dims(), (std::vector<int64_t>{0, 4, 2}));
  Tensor r1 = ConcatenateRows({CopyRows(t, 0, 2), CopyRows(t, 2, 5)});
  EXPECT_EQ(r1.ToVector<float>(), t.ToVector<float>());
  Tensor c1 = ConcatenateColumns({CopyColumns(t, 0, 1), CopyColumns(t, 1, 4)});
  EXPECT_EQ(c1.ToVector<float>(), t.ToVector<float>());
}

// The SINGA seed promises the column copies for 1-D and 2-D tensors: the columns of a 1-D
// tensor are its elements (NumPy's hstack joins 1-D arrays end to end the same way).
TEST(CopiesTest, ColumnsOfOneDimensionalTensors) {
  Rng rng(4);
  for (int round = 0; round < 20; ++round) {
    const int64_t n = std::uniform_int_distribution<int64_t>(0, 9)(rng);
    Tensor t = ref::RandomStridedTensor<int32_t>(rng, {n});
    const std::vector<int32_t> all = ref::Elements<int32_t>(t);
    const int64_t start = std::uniform_int_distribution<int64_t>(0, n)(rng);
    const int64_t end = std::uniform_int_distribution<int64_t>(start, n)(rng);
    Tensor cols = CopyColumns(t, start, end);
    EXPECT_EQ(cols.Dims(), (std::vector<int64_t>{end - start}));
    EXPECT_FALSE(SharesStorage(cols, t));
    EXPECT_EQ(cols.ToVector<int32_t>(),
              std::vector<int32_t>(all.begin() + start, all.begin() + end));
    Tensor joined = ConcatenateColumns({CopyColumns(t, 0, start), cols, CopyColumns(t, end, n)});
    EXPECT_EQ(joined.Dims(), (std::vector<int64_t>{n}));
    EXPECT_EQ(joined.ToVector<int32_t>(), all);
  }
  // 2-D inputs keep joining along axis 1.
  Tensor m = Tensor::FromVector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(ConcatenateColumns({m, m}).ToVector<int32_t>(),
            (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(CopiesTest, Errors) {
  Tensor a = Tensor::Zeros({2, 3}, DType::kFloat32), b = Tensor::Zeros({2, 4}, DType::kFloat32);
  Tensor i = Tensor::Zeros({2, 3}, DType::kInt32);
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              ConcatenateRows({a, b});
            }).find("Concatenate: tensor 1 has dims [2 4]"),
            std::string::npos);
  EXPECT_NE(message([&] { ConcatenateRows({a, i}); }).find("tensor 1 is int32"), std::string::npos);
  EXPECT_NE(message([&] { Concatenate({}, 0); }).find("Concatenate: no tensors"),
            std::string::npos);
  EXPECT_NE(message([&] { Concatenate({a}, 2); }).find("Concatenate: axis 2"), std::string::npos);
  EXPECT_NE(message([&] { CopyRows(a, 1, 3); }).find("CopyRows: range [1, 3)"), std::string::npos);
  EXPECT_NE(
      message([&] { CopyColumns(Tensor::FromScalar(1.0f), 0, 1); }).find("CopyColumns: needs"),
      std::string::npos);
  EXPECT_NE(message([&] {
              CopyColumns(Tensor::Zeros({3}, DType::kFloat32), 1, 4);
            }).find("CopyColumns: range [1, 4) is not within [0, 3] of axis 0"),
            std::string::npos);
  EXPECT_NE(message([&] {
              ConcatenateColumns(
                  {Tensor::Zeros({1, 3}, DType::kFloat32), Tensor::Zeros({3}, DType::kFloat32)});
            }).find("ConcatenateColumns: 1 of 2 tensors are 1-D"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Split(a, 1, {1, 1});
            }).find("Split: sizes [1 1] add up to 2"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Split(a, 1, {4, -1});
            }).find("Split: negative size -1"),
            std::string::npos);
  EXPECT_NE(message([&] { ConcatenateColumns({Tensor::FromScalar(1.0f)}); }).find("rank-0"),
            std::string::npos);
}

}  // namespace
}  // namespace tensorkit
