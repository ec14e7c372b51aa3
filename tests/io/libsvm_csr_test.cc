// io/libsvm.h's csr option: the features as CSR arrays equal to the SparseTensor read, over
// several chunks, for both value dtypes, bases and with labels, qids and multilabel alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensorkit/io/libsvm.h"

namespace tensorkit::io {
namespace {

// The CSR of a SparseTensor in order {0, 1}: (indptr, column indices).
std::pair<std::vector<int64_t>, std::vector<int64_t>> CsrOf(const SparseTensor& st) {
  const std::vector<int64_t> ind = st.indices().ToVector<int64_t>();
  std::vector<int64_t> ptr(st.shape()[0] + 1, 0), cols;
  for (size_t k = 0; k < ind.size(); k += 2) {
    ++ptr[ind[k] + 1];
    cols.push_back(ind[k + 1]);
  }
  for (size_t r = 1; r < ptr.size(); ++r) ptr[r] += ptr[r - 1];
  return {ptr, cols};
}

TEST(LibsvmCsrTest, EqualsTheSparseTensorRead) {
  std::string text;  // about 3 MiB: several 1 MiB chunks
  for (int i = 0; i < 120000; ++i) {
    text += std::to_string(i % 3) + " qid:" + std::to_string(i / 10);
    if (i % 7 != 0) text += " " + std::to_string(1 + i % 5) + ":0.5";
    text += " 9:" + std::to_string(i) + ".25 " + std::to_string(12 + i % 11) + ":-1\n";
  }
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    for (IndexBase base : {IndexBase::kAuto, IndexBase::kZero}) {
      LibsvmReadOptions o;
      o.dtype = dtype;
      o.base = base;
      const LibsvmData coo = ReadLibsvmFromMemory(text.data(), text.size(), "x.svm", o);
      o.csr = true;
      const LibsvmData csr = ReadLibsvmFromMemory(text.data(), text.size(), "x.svm", o);
      EXPECT_FALSE(csr.features.indices().defined());
      EXPECT_EQ(csr.csr.shape, coo.features.shape());
      const auto [ptr, cols] = CsrOf(coo.features);
      EXPECT_EQ(csr.csr.indptr.dtype(), DType::kInt64);
      EXPECT_EQ(csr.csr.indptr.ToVector<int64_t>(), ptr);
      EXPECT_EQ(csr.csr.indices.ToVector<int64_t>(), cols);
      EXPECT_EQ(csr.csr.values.dtype(), dtype);
      if (dtype == DType::kFloat64) {
        EXPECT_EQ(csr.csr.values.ToVector<double>(), coo.features.values().ToVector<double>());
      } else {
        EXPECT_EQ(csr.csr.values.ToVector<float>(), coo.features.values().ToVector<float>());
      }
      EXPECT_EQ(csr.labels.ToVector<double>(), coo.labels.ToVector<double>());
      EXPECT_EQ(csr.qids.ToVector<int64_t>(), coo.qids.ToVector<int64_t>());
      EXPECT_EQ(csr.one_based, coo.one_based);
    }
  }
}

TEST(LibsvmCsrTest, MultilabelAndEmpty) {
  const std::string text = "1,2 3:1\n\n0 1:2 2:3\n4,5,6\n";
  LibsvmReadOptions o;
  o.multilabel = true;
  o.csr = true;
  const LibsvmData d = ReadLibsvmFromMemory(text.data(), text.size(), "m.svm", o);
  EXPECT_EQ(d.csr.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(d.csr.indptr.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 3, 3}));
  EXPECT_EQ(d.csr.indices.ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(d.labels.ToVector<double>(), (std::vector<double>{1, 2, 0, 4, 5, 6}));
  EXPECT_EQ(d.label_offsets.ToVector<int64_t>(), (std::vector<int64_t>{0, 2, 3, 6}));
  const LibsvmData e = ReadLibsvmFromMemory("", 0, "e.svm", o);
  EXPECT_EQ(e.csr.shape, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(e.csr.indptr.ToVector<int64_t>(), (std::vector<int64_t>{0}));
}

}  // namespace
}  // namespace tensorkit::io
