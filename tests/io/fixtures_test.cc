// Files written by NumPy and SciPy themselves (tests/io/data, made by make_fixtures.py), read
// without Python: a reader that shares a bug with tensorkit's own writer cannot pass these.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorkit/dense/ops.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(TENSORKIT_SOURCE_DIR) + "/tests/io/data/" + name;
}

// value(dtype, i) of make_fixtures.py as float64 (exact for every dtype but int64).
double Value(const std::string& dtype, int64_t i) {
  if (dtype == "bool") return i % 3 == 1;
  if (dtype == "int8") return static_cast<double>((i * 37) % 256 - 128);
  if (dtype == "uint8") return static_cast<double>((i * 37) % 256);
  if (dtype == "int16") return static_cast<double>((i * 4099) % 65536 - 32768);
  if (dtype == "int32") return static_cast<double>(i * 1000003 - 5000000);
  if (dtype == "float16") return static_cast<double>(i) * 0.25 - 3;
  if (dtype == "float32") return static_cast<double>(i) * 0.5 - 7.25;
  return static_cast<double>(i) / 3.0 - 2;
}
int64_t Int64Value(int64_t i) { return i * 1099511627791 - (int64_t{1} << 40); }

// Checks dtype, dims and every element of `t` against the formula for `dtype`.
void ExpectFormula(const Tensor& t, const std::string& dtype, const std::vector<int64_t>& dims,
                   const std::string& what) {
  ASSERT_TRUE(t.defined()) << what;
  EXPECT_EQ(DTypeName(t.dtype()), dtype) << what;
  ASSERT_EQ(t.Dims(), dims) << what;
  if (dtype == "int64") {
    const std::vector<int64_t> v = t.ToVector<int64_t>();
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      EXPECT_EQ(v[i], Int64Value(i)) << what << " at " << i;
    }
    return;
  }
  Tensor f = Tensor::Empty(dims, DType::kFloat64);
  Copy(t, &f);
  const std::vector<double> v = f.ToVector<double>();
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    EXPECT_EQ(v[i], Value(dtype, i)) << what << " at " << i;
  }
}

TEST(NumPyFixturesTest, EveryDTypeInCAndFortranOrder) {
  for (const std::string dtype :
       {"bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"}) {
    for (const std::string order : {"c", "f"}) {
      const std::string name = "dense_" + dtype + "_" + order + ".npy";
      TensorData d = Read(Fixture(name));
      ASSERT_FALSE(d.is_sparse()) << name;
      ExpectFormula(d.dense, dtype, {3, 4}, name);
    }
  }
  ExpectFormula(Read(Fixture("dense_3d_f.npy")).dense, "int16", {2, 3, 4}, "dense_3d_f.npy");
}

TEST(NumPyFixturesTest, BigEndianScalarAndEmpty) {
  ExpectFormula(Read(Fixture("dense_int32_be.npy")).dense, "int32", {3, 4}, "int32 big-endian");
  ExpectFormula(Read(Fixture("dense_float64_be.npy")).dense, "float64", {3, 4}, "f8 big-endian");
  ExpectFormula(Read(Fixture("dense_scalar.npy")).dense, "float64", {}, "scalar");
  Tensor empty = Read(Fixture("dense_empty.npy")).dense;
  EXPECT_EQ(empty.dtype(), DType::kInt64);
  EXPECT_EQ(empty.Dims(), (std::vector<int64_t>{0, 3}));
}

TEST(NumPyFixturesTest, SavezStoredAndCompressed) {
  for (const std::string name : {"savez.npz", "savez_compressed.npz"}) {
    const auto members = ReadNpzMembers(Fixture(name));
    ASSERT_EQ(members.size(), 2u) << name;
    EXPECT_EQ(members[0].first, "a");
    EXPECT_EQ(members[1].first, "b");
    ExpectFormula(members[0].second, "int32", {3, 4}, name + " a");
    ExpectFormula(members[1].second, "float64", {2, 3, 4}, name + " b (Fortran order)");
    ExpectFormula(Read(Fixture(name)).dense, "int32", {3, 4}, name + " first member");
    ReadOptions b;
    b.member = "b";
    ExpectFormula(Read(Fixture(name), b).dense, "float64", {2, 3, 4}, name + " member b");
  }
}

// scipy.sparse.save_npz of the [5 7] matrix with entries where (3r + 5c) % 4 == 0.
TEST(NumPyFixturesTest, ScipySparseCooCsrCsc) {
  struct Case {
    std::string name;
    DType dtype;
    double half;  // 0.5 added to every value, or 0
  };
  for (const Case& c :
       {Case{"scipy_coo.npz", DType::kFloat64, 0.5}, Case{"scipy_csr.npz", DType::kFloat32, 0.5},
        Case{"scipy_csc.npz", DType::kInt64, 0.0}}) {
    TensorData d = Read(Fixture(c.name));
    ASSERT_TRUE(d.is_sparse()) << c.name;
    const SparseTensor& st = d.sparse;
    EXPECT_EQ(st.shape(), (std::vector<int64_t>{5, 7})) << c.name;
    EXPECT_EQ(st.values().dtype(), c.dtype) << c.name;
    st.ValidateIndices();
    Tensor dense = Tensor::Empty({5, 7}, DType::kFloat64);
    Copy(st.ToDense(), &dense);
    const std::vector<double> v = dense.ToVector<double>();
    int64_t nnz = 0;
    for (int64_t r = 0; r < 5; ++r) {
      for (int64_t col = 0; col < 7; ++col) {
        const bool present = (3 * r + 5 * col) % 4 == 0;
        nnz += present;
        EXPECT_EQ(v[r * 7 + col], present ? 10.0 * r + col + c.half : 0.0)
            << c.name << " at " << r << ", " << col;
      }
    }
    EXPECT_EQ(st.nnz(), nnz) << c.name;
  }
}

}  // namespace
}  // namespace tensorkit::io
