// Helpers for the sparse tests: building tensors from lists, random tensors, and a naive
// dense oracle (one entry at a time, in entry order, so the last repeated index wins).
#ifndef TENSORKIT_TESTS_SPARSE_SPARSE_TEST_UTIL_H_
#define TENSORKIT_TESTS_SPARSE_SPARSE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/tensorkit.h"
#include "test_util.h"

namespace tensorkit::testing {

inline int64_t Product(const std::vector<int64_t>& shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
}

// A SparseTensor from flat index rows and values.
template <typename T>
SparseTensor MakeSparse(const std::vector<int64_t>& rows, std::vector<T> values,
                        const std::vector<int64_t>& shape, const std::vector<int>& order = {}) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t rank = static_cast<int64_t>(shape.size());
  return SparseTensor::Create(Tensor::FromVector(rows, {n, rank}),
                              Tensor::FromVector(std::move(values), {n}), shape, order);
}

// Flat index rows of st (from any pattern or device).
inline std::vector<int64_t> Rows(const SparseTensor& st) {
  return st.indices().ToVector<int64_t>();
}

// C-order linear position of row i of `rows`.
inline int64_t Linear(const std::vector<int64_t>& rows, int64_t i,
                      const std::vector<int64_t>& shape) {
  int64_t p = 0;
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t a = 0; a < rank; ++a) p = p * shape[a] + rows[i * rank + a];
  return p;
}

// Naive dense equivalent of st in C order; absent elements are T{}.
template <typename T>
std::vector<T> NaiveDense(const SparseTensor& st) {
  std::vector<T> out(static_cast<size_t>(Product(st.shape())), T{});
  const std::vector<int64_t> rows = Rows(st);
  const std::vector<T> vals = st.values().ToVector<T>();
  for (int64_t i = 0; i < st.nnz(); ++i) out[Linear(rows, i, st.shape())] = vals[i];
  return out;
}

// Random indices within shape (repeats likely when `nnz` is near the element count).
inline std::vector<int64_t> RandomRows(std::mt19937_64& rng, int64_t nnz,
                                       const std::vector<int64_t>& shape) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < nnz; ++i) {
    for (int64_t d : shape) rows.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(d)));
  }
  return rows;
}

// Random distinct index rows (nnz <= prod(shape)), in random sequence.
inline std::vector<int64_t> RandomUniqueRows(std::mt19937_64& rng, int64_t nnz,
                                             const std::vector<int64_t>& shape) {
  const int64_t total = Product(shape);
  std::vector<int64_t> cells(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) cells[i] = i;
  std::shuffle(cells.begin(), cells.end(), rng);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < nnz; ++i) {
    std::vector<int64_t> row(shape.size());
    int64_t c = cells[i];
    for (int64_t a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
      row[a] = c % shape[a];
      c /= shape[a];
    }
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

inline std::vector<double> RandomValues(std::mt19937_64& rng, int64_t n) {
  std::vector<double> v;
  std::uniform_real_distribution<double> dist(-10.0, 10.0);
  for (int64_t i = 0; i < n; ++i) v.push_back(dist(rng));
  return v;
}

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_SPARSE_SPARSE_TEST_UTIL_H_
