#include "tensorkit/sparse/mixed.h"

#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/reduce.h"

namespace tensorkit {
namespace {

using compressed_detail::Acc;
using compressed_detail::FromAcc;
using compressed_detail::ToAcc;

constexpr DTypeSet kMixedDTypes = kNumericDTypes & ~Bit(DType::kBool);

// Checks dtype, device and broadcasting of b against a; returns b's stride for each axis of a
// (0 where b has no such axis or a dim of 1).
std::vector<int64_t> BroadcastStrides(const SparseTensor& a, const Tensor& b, const char* op) {
  b.CheckDefined(op);
  compressed_detail::CheckIndexBounds(a, op);
  TK_CHECK(b.device().is_cpu(), kDeviceMismatch, op, ": the sparse operand is on the CPU but the",
           " dense one is on ", b.device(), "; move it with To(Device::Cpu())");
  TK_CHECK(a.dtype() == b.dtype(), kDTypeMismatch, op, ": dtypes differ: sparse ",
           DTypeName(a.dtype()), ", dense ", DTypeName(b.dtype()),
           "; convert one operand with Copy");
  Dispatch<kMixedDTypes>(a.dtype(), op, []<typename T>() {});
  const int rank = a.rank(), brank = b.NumAxes();
  const std::vector<int64_t> bd = b.Dims();
  bool ok = brank <= rank;
  for (int j = 0; ok && j < brank; ++j) {
    const int64_t sd = a.shape()[rank - brank + j];
    ok = bd[j] == sd || bd[j] == 1;
  }
  TK_CHECK(ok, kShapeMismatch, op, ": dense dims ", ShapeString(bd),
           " do not broadcast to the sparse shape ", ShapeString(a.shape()),
           "; each dense dim (aligned on the right) must equal the sparse dim or be 1");
  std::vector<int64_t> strides(rank, 0);
  for (int j = 0; j < brank; ++j) strides[rank - brank + j] = bd[j] == 1 ? 0 : b.Stride(j);
  return strides;
}

}  // namespace

Tensor Add(const SparseTensor& a, const Tensor& b) {
  const char* op = "Add";
  const std::vector<int64_t> bs = BroadcastStrides(a, b, op);
  TK_CHECK(a.rank() <= kMaxAxes, kUnsupported, op, ": the dense result of shape ",
           ShapeString(a.shape()), " would have more than ", kMaxAxes, " axes");
  Tensor out = ReduceSum(a, {});  // a's dense form, duplicates summed
  const int rank = a.rank();
  const int64_t inner = rank == 0 ? 1 : a.shape().back();
  const int64_t total = out.NumElements();
  if (total == 0) return out;
  const int64_t rows = total / inner;
  const int64_t inner_stride = rank == 0 ? 0 : bs.back();
  Dispatch<kMixedDTypes>(a.dtype(), op, [&]<typename T>() {
    T* o = out.data<T>();
    const T* bb = b.data<T>();
    ParallelFor(0, rows, GrainFor(inner * 2 * sizeof(T)), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        int64_t off = 0, rest = r;
        for (int ax = rank - 2; ax >= 0; --ax) {  // b's offset of this row
          off += (rest % a.shape()[ax]) * bs[ax];
          rest /= a.shape()[ax];
        }
        T* orow = o + r * inner;
        const T* brow = bb + off;
        for (int64_t j = 0; j < inner; ++j) {
          orow[j] = FromAcc<T>(ToAcc(orow[j]) + ToAcc(brow[j * inner_stride]));
        }
      }
    });
  });
  return out;
}

SparseTensor Mul(const SparseTensor& a, const Tensor& b) {
  const char* op = "Mul";
  const std::vector<int64_t> bs = BroadcastStrides(a, b, op);
  const int64_t nnz = a.nnz();
  const int rank = a.rank();
  Tensor values = Tensor::Empty({nnz}, a.dtype());
  if (nnz > 0) {
    const int64_t* idx = a.indices().data<int64_t>();
    const int64_t s0 = a.indices().Stride(0), s1 = rank > 0 ? a.indices().Stride(1) : 0;
    const int64_t vs = a.values().Stride(0);
    Dispatch<kMixedDTypes>(a.dtype(), op, [&]<typename T>() {
      const T* av = a.values().data<T>();
      const T* bb = b.data<T>();
      T* o = values.data<T>();
      ParallelFor(0, nnz, GrainFor(8 * (rank + 2)), [&](int64_t eb, int64_t ee) {
        for (int64_t e = eb; e < ee; ++e) {
          int64_t off = 0;
          for (int ax = 0; ax < rank; ++ax) off += idx[e * s0 + ax * s1] * bs[ax];
          o[e] = FromAcc<T>(ToAcc(av[e * vs]) * ToAcc(bb[off]));
        }
      });
    });
  }
  return SparseTensor::Create(a.indices(), values, a.shape(), a.order());
}

SparseTensor Add(const SparseTensor& a, const SparseTensor& b) { return SparseAdd(a, b); }

}  // namespace tensorkit
