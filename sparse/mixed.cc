// Operations mixing sparse and dense operands. The arithmetic runs in the dense kernel engine
// (its broadcasting, SIMD loops and executors); this file only gathers and checks.
#include "tensorkit/sparse/mixed.h"

#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/reduce.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// The dtypes the dense engine computes in.
constexpr DTypeSet kMixedDTypes = kComputeDTypes;

// Checks that b is defined, a created and both on one device.
void CheckDevices(const SparseTensor& a, const Tensor& b, const char* op) {
  b.CheckDefined(op);
  si::CheckCreated(a, op);
  TK_CHECK(b.device() == a.device(), kDeviceMismatch, op, ": the sparse operand is on ", a.device(),
           " but the dense one is on ", b.device(), "; move it with Tensor::To(", a.device(), ")");
}

// Checks dtype and broadcasting of b against a; returns b's stride for each axis of a (0 where b
// has no such axis or a dim of 1).
std::vector<int64_t> BroadcastStrides(const SparseTensor& a, const Tensor& b, const char* op) {
  TK_CHECK(a.dtype() == b.dtype(), kDTypeMismatch, op, ": dtypes differ: sparse ",
           DTypeName(a.dtype()), ", dense ", DTypeName(b.dtype()),
           "; convert one operand with Copy");
  CheckDType<kMixedDTypes>(a.dtype(), op);
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
  CheckDevices(a, b, op);
  // A CPU tensor's bounds are checked first; on a device ReduceSum's body checks them.
  if (!OnCuda(a)) si::CheckIndexBounds(a, op);
  BroadcastStrides(a, b, op);
  TK_CHECK(a.rank() <= kMaxAxes, kUnsupported, op, ": the dense result of shape ",
           ShapeString(a.shape()), " would have more than ", kMaxAxes, " axes");
  Tensor out = ReduceSum(a, {});  // a's dense form, duplicates summed (on a's device)
  AddTo(b, &out);                 // the engine broadcasts b
  return out;
}

SparseTensor Mul(const SparseTensor& a, const Tensor& b) {
  const char* op = "Mul";
  CheckDevices(a, b, op);
  if (OnCuda(a)) return sparse_cuda::Mul(a, b, BroadcastStrides(a, b, op), op);
  si::CheckIndexBounds(a, op);
  const std::vector<int64_t> bs = BroadcastStrides(a, b, op);
  const int64_t nnz = a.nnz();
  const int rank = a.rank();
  // The element of b that each entry meets, as a memory index of b's storage.
  std::vector<int64_t> where(static_cast<size_t>(nnz));
  const Tensor idx = a.indices().HostContiguous();
  const int64_t* rows = nnz * rank > 0 ? idx.data<int64_t>() : nullptr;
  const int64_t offset = b.pattern().offset;
  ParallelFor(0, nnz, GrainFor(8 * (rank + 1)), [&](int64_t eb, int64_t ee) {
    for (int64_t e = eb; e < ee; ++e) {
      int64_t off = offset;
      for (int ax = 0; ax < rank; ++ax) off += rows[e * rank + ax] * bs[ax];
      where[e] = off;
    }
  });
  Tensor flat;  // b's storage as one contiguous axis, for the one gather
  if (nnz > 0) {
    const int64_t elems = b.storage()->size_bytes() / DTypeSize(b.dtype());
    flat = Tensor(b.storage(), DefaultPattern({elems}), b.dtype());
  }
  const Tensor met =
      nnz > 0 ? si::GatherValues(flat, where.data(), nnz) : Tensor::Empty({0}, a.dtype());
  Tensor values = Tensor::Empty({nnz}, a.dtype());
  Mul(a.values(), met, &values);  // the product in the engine
  return SparseTensor::Create(a.indices(), values, a.shape(), a.order());
}

}  // namespace tensorkit
