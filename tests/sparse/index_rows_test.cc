// sparse/index_rows.h, the primitives features/ builds on: the forms taking index rows as a
// Tensor give, on the CPU, what the host-pointer forms give (entries, fetched rows, messages),
// for any strides.
#include "tensorkit/sparse/index_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

namespace sr = sparse_rows;
using ::tensorkit::testing::ErrorOf;

// Rows [n, 2] as a transposed (strided) view of a [2, n] tensor.
Tensor StridedRows(const std::vector<int64_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size()) / 2;
  std::vector<int64_t> by_axis(rows.size());
  for (int64_t i = 0; i < n; ++i) {
    by_axis[i] = rows[2 * i];
    by_axis[n + i] = rows[2 * i + 1];
  }
  const Tensor t = Transpose(Tensor::FromVector(by_axis, {2, n}), 0, 1);
  EXPECT_FALSE(t.IsContiguous());
  return t;
}

TEST(SparseRows, BoundsOfTensorRowsMatchTheHostForm) {
  const std::vector<int64_t> rows = {0, 1, 2, 3, 1, 9, 2, 2};
  const std::vector<int64_t> shape = {3, 4};
  const Tensor idx = StridedRows(rows);
  std::vector<int64_t> row;
  EXPECT_EQ(sr::FirstOutOfBounds(idx, shape, &row), 2);
  EXPECT_EQ(row, (std::vector<int64_t>{1, 9}));
  EXPECT_EQ(sr::FirstOutOfBounds(rows.data(), 4, shape), 2);
  const std::string host = ErrorOf([&] { sr::CheckBounds("Op", rows.data(), 4, shape); });
  EXPECT_EQ(ErrorOf([&] { sr::CheckBounds("Op", idx, shape); }), host);
  EXPECT_NE(host.find("Op: entry 2 at [1 9] is out of bounds for shape [3 4] (axis 1: 9 >= 4)"),
            std::string::npos)
      << host;
  row.clear();
  EXPECT_EQ(sr::FirstOutOfBounds(StridedRows({0, 0, 2, 3}), shape, &row), -1);
  EXPECT_TRUE(row.empty());
  sr::CheckBounds("Op", StridedRows({0, 0, 2, 3}), shape);  // no Error
}

TEST(SparseRows, OrderOfTensorRowsFetchesTheUnorderedPair) {
  const Tensor idx = StridedRows({0, 1, 1, 0, 1, 0, 0, 5});
  std::vector<int64_t> pair;
  EXPECT_EQ(sr::FirstUnordered(idx, {0, 1}, /*strict=*/false, &pair), 3);
  EXPECT_EQ(pair, (std::vector<int64_t>{1, 0, 0, 5}));
  EXPECT_EQ(sr::FirstUnordered(idx, {0, 1}, /*strict=*/true, &pair), 2);
  EXPECT_EQ(pair, (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(sr::FirstUnordered(idx, {1, 0}, /*strict=*/false, &pair), 1);
  EXPECT_EQ(sr::FirstUnordered(StridedRows({0, 1, 0, 2, 3, 0}), {0, 1}, true, &pair), -1);
}

TEST(SparseRows, SortEntriesOfTensorRowsIsStableAndPointersFollow) {
  const Tensor idx = StridedRows({2, 1, 0, 3, 2, 0, 0, 3, 3, 1});
  const Tensor values = Tensor::FromVector<int64_t>({10, 11, 12, 13, 14});
  Tensor sorted_idx, sorted_values;
  sr::SortEntries(idx, values, {4, 4}, {0, 1}, &sorted_idx, &sorted_values);
  EXPECT_EQ(sorted_idx.ToVector<int64_t>(), (std::vector<int64_t>{0, 3, 0, 3, 2, 0, 2, 1, 3, 1}));
  EXPECT_EQ(sorted_values.ToVector<int64_t>(), (std::vector<int64_t>{11, 13, 12, 10, 14}));
  // Row 1 is empty: it starts where row 2 does.
  EXPECT_EQ(sr::RunPointers(sorted_idx, 0, 4).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 2, 2, 4, 5}));
  // By column: the pointers of the rows' second index, read through the strides.
  EXPECT_EQ(sr::RunPointers(StridedRows({5, 0, 1, 0, 0, 2}), 1, 3).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 2, 2, 3}));
}

}  // namespace
}  // namespace tensorkit
