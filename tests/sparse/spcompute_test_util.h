// Helpers for the sparse compute tests: random COO tensors and a naive dense oracle.
#ifndef TENSORKIT_TESTS_SPARSE_SPCOMPUTE_TEST_UTIL_H_
#define TENSORKIT_TESTS_SPARSE_SPCOMPUTE_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <vector>

#include "sparse/sparse_test_util.h"
#include "tensorkit/tensorkit.h"

namespace tensorkit::spcompute_testing {

using ::tensorkit::testing::Product;

// Random entries in `shape`, in random order, duplicates likely when `dups`; values are small
// integers held in T so that every sum is exact whatever its order.
template <typename T>
SparseTensor RandomCoo(std::mt19937& rng, const std::vector<int64_t>& shape, int64_t nnz,
                       bool dups = true, std::vector<int> order = {}) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> idx(static_cast<size_t>(nnz * rank));
  std::vector<T> val(static_cast<size_t>(nnz));
  std::uniform_int_distribution<int> v(-4, 4);
  for (int64_t e = 0; e < nnz; ++e) {
    const bool copy = dups && e > 0 && rng() % 4 == 0;
    const int64_t src = copy ? static_cast<int64_t>(rng() % e) : -1;
    for (int a = 0; a < rank; ++a) {
      idx[e * rank + a] = copy ? idx[src * rank + a]
                               : static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[a]));
    }
    val[e] = static_cast<T>(v(rng));
  }
  return SparseTensor::Create(Tensor::FromVector(idx, {nnz, rank}), Tensor::FromVector(val), shape,
                              order);
}

// The dense meaning of a sparse tensor (duplicates summed) as doubles in C order.
inline std::vector<double> DenseOracle(const SparseTensor& st) {
  std::vector<double> out(static_cast<size_t>(Product(st.shape())), 0.0);
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  std::vector<double> val(static_cast<size_t>(st.nnz()));
  Dispatch<kNumericDTypes>(st.dtype(), "DenseOracle", [&]<typename T>() {
    const std::vector<T> v = st.values().ToVector<T>();
    for (size_t i = 0; i < v.size(); ++i) val[i] = static_cast<double>(v[i]);
  });
  for (int64_t e = 0; e < st.nnz(); ++e) {
    int64_t lin = 0;
    for (int a = 0; a < st.rank(); ++a) lin = lin * st.shape()[a] + idx[e * st.rank() + a];
    out[lin] += val[e];
  }
  return out;
}

// Elements of a tensor of any numeric dtype as doubles in C order.
inline std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  Dispatch<kNumericDTypes>(t.dtype(), "AsDoubles", [&]<typename T>() {
    for (const T& x : t.ToVector<T>()) out.push_back(static_cast<double>(x));
  });
  return out;
}

// A dense tensor of small random integers held in T.
template <typename T>
Tensor RandomDense(std::mt19937& rng, const std::vector<int64_t>& dims) {
  std::vector<T> v(static_cast<size_t>(Product(dims)));
  std::uniform_int_distribution<int> d(-3, 3);
  for (T& x : v) x = static_cast<T>(d(rng));
  return Tensor::FromVector(v, dims);
}

// A view of `t` (2-D, C order) with its axes swapped: the same data, column-major. Returns a
// tensor with dims [d1, d0] whose element (i, j) is t(j, i).
inline Tensor TransposedView(const Tensor& t) {
  const int64_t d0 = t.Dim(0), d1 = t.Dim(1);
  return t.WithPattern(MakePattern({d1, d0}, {d1 > 1 ? 1 : 0, d0 > 1 ? d1 : 0}));
}

}  // namespace tensorkit::spcompute_testing

#endif  // TENSORKIT_TESTS_SPARSE_SPCOMPUTE_TEST_UTIL_H_
