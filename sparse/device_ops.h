// tensorkit/sparse/device_ops.h: the CUDA bodies of sparse/'s operations (not a public header).
//
// Glossary
//   choice      the one `if (OnCuda(x))` of an operation (Note [device choice] of
//               common/device.h).
//   CPU body    what an operation runs after its choice, in the operation's own source file.
//   CUDA body   what the choice calls instead: a function below.
//
// Note [sparse CUDA bodies]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Every sparse operation makes the checks that do not depend on the device, then chooses the
// device once: `if (OnCuda(x)) return sparse_cuda::Op(...);`, followed by its CPU body. The
// CUDA bodies all live here, in the way dense/executor.h keeps the engine's device seam in one
// place: host code (device_structure.cc, device_compute.cc) composing the CUDA primitives
// (cuda/structure.h, cuda/compute.h) and the dense engine's ops, so it compiles in every build;
// without CUDA the primitives are the no_gpu/ stubs, which nothing reaches, since no tensor can
// live on a CUDA device there. A CUDA body gets operands its operation has checked, all on one
// CUDA device (the operation refuses mixed devices with kDeviceMismatch), makes the checks that
// only the device has (cuSPARSE's dtypes, bounds found on the device), and returns results on
// that device; nothing is staged through the host. Errors have the CPU body's codes and
// messages. sparse/README.md maps every public operation to its CPU body and its CUDA body.
#ifndef TENSORKIT_SPARSE_DEVICE_OPS_H_
#define TENSORKIT_SPARSE_DEVICE_OPS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::sparse_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- Steps shared by the bodies (device_structure.cc) ----------------------------------------

// Throws the bounds Error of internal.h naming `op` and the first entry of device rows `idx`
// outside `shape` (found on the device, only that entry fetched).
void CheckBounds(const char* op, const Tensor& idx, const std::vector<int64_t>& shape);
// Entries (idx, values) bounds-checked against `shape` (naming `op`), stably sorted in C order
// and merged by `rule`: Coalesce, SparseAdd / SparseMultiply and the reductions. The result has
// order {0..rank-1}.
SparseTensor Merge(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                   const MergeRule& rule, const char* op);
// Merge of entries already inside `shape` (derived from checked ones): no bounds pass.
SparseTensor MergeChecked(const Tensor& idx, const Tensor& values,
                          const std::vector<int64_t>& shape, const MergeRule& rule);

// --- SparseTensor (sparse_tensor.h; device_structure.cc) -------------------------------------

// IndicesValid / ValidateIndices: each check finds its first bad entry on the device and
// fetches only it; throws (when `raise`) or returns false as the CPU body does.
bool CheckIndices(const SparseTensor& st, const char* op, bool raise);
bool SortedIn(const SparseTensor& st, const std::vector<int>& order);
// The sorted (Reorder) or sorted and merged (Coalesce) tensor; `st` is not modified.
SparseTensor Reorder(const SparseTensor& st, const std::vector<int>& order);
SparseTensor Coalesce(const SparseTensor& st);
// group(dims): contiguous indices and values (the groups' views point into them), the group
// starts followed by nnz, and each group's coordinates on `dims`, found on the device.
void Group(const SparseTensor& st, const std::vector<int>& dims, Tensor* indices, Tensor* values,
           std::vector<int64_t>* starts, std::vector<int64_t>* coords);
// ToDense into `dense` (checked: dims, dtype, same device): zeros first when `zero`, else *fill
// when `fill` is given.
void ToDense(const SparseTensor& st, Tensor* dense, bool zero, const Tensor* fill);
SparseTensor FromDense(const Tensor& dense);
// Concat's copies: the inputs' entries one after another along `axis` into a tensor of `shape`
// with `total` entries and order `order`.
SparseTensor Concat(const std::vector<SparseTensor>& inputs, int axis,
                    const std::vector<int64_t>& shape, int64_t total,
                    const std::vector<int>& order);

// --- sparse_ops.h (device_structure.cc) ------------------------------------------------------

// The entries inside the box [start, start + size) (checked), shifted.
SparseTensor Slice(const SparseTensor& st, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& size);
// Pieces of `sizes` (checked) along `axis`.
std::vector<SparseTensor> Split(const SparseTensor& st, int axis,
                                const std::vector<int64_t>& sizes);
// Permute's new indices: out[i][a] = row i's index on perm[a].
Tensor PermuteIndices(const SparseTensor& st, const std::vector<int>& perm);
// Reshape's rows (bounds checked) written into `out`, int64 [nnz, new_dims.size()] on st's
// device.
void ReshapeIndices(const SparseTensor& st, const std::vector<int64_t>& new_dims, Tensor* out,
                    const char* op);

// --- compressed.h (device_structure.cc) ------------------------------------------------------

// CompressSparse of a checked 2-D tensor (internal.h).
sparse_internal::Compressed CompressSparse(const SparseTensor& st, int major_axis, const char* op);
// Validate of contiguous arrays (checked: dtypes, lengths): the pointers on the host (fetched:
// num_major + 1 numbers), the minor indices on the device.
void ValidateCompressed(const Tensor& ptr, const Tensor& minor, int64_t num_major,
                        int64_t num_minor, int major_axis, const char* op, const char* major_name,
                        const char* minor_name);

// --- reduce.h (device_compute.cc) ------------------------------------------------------------

// ReduceSum (kSum), ReduceMax (kMax), ReduceMin (kMin) of st over `axes`: a dense result.
Tensor ReduceDense(const SparseTensor& st, std::vector<int> axes, MergeOp kind, const char* op);
// The same with a sparse result (ReduceSumSparse, ...).
SparseTensor ReduceSparse(const SparseTensor& st, std::vector<int> axes, MergeOp kind,
                          const char* op);
Tensor RowNnz(const SparseTensor& st, int axis);

// --- products.h (device_compute.cc) ----------------------------------------------------------

// The products with a sparse operand on the device (the public functions' checks of their own
// made: ranks, a created matrix).
void SparseDenseProduct(const char* op, Scalar alpha, Scalar beta, const CsrMatrix& a,
                        const Tensor& b, Tensor* c);
void SparseDenseProduct(const char* op, Scalar alpha, Scalar beta, const SparseTensor& a,
                        const Tensor& b, Tensor* c);
void DenseSparseProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& a,
                        const CsrMatrix& b, Tensor* c);
void DenseSparseProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& a,
                        const SparseTensor& b, Tensor* c);
// a @ b through cuSPARSE's SpGEMM; shapes, dtypes and devices checked.
CsrMatrix SparseSparseProduct(const CsrMatrix& a, const CsrMatrix& b, const char* op);
// Union with sums / intersection with products; shapes, dtypes and devices checked.
SparseTensor SparseAdd(const SparseTensor& a, const SparseTensor& b, const char* op);
SparseTensor SparseMultiply(const SparseTensor& a, const SparseTensor& b, const char* op);

// --- mixed.h (device_compute.cc) -------------------------------------------------------------

// Mul(st, dense) with dense's stride for each axis of a (checked broadcast; 0 where it
// repeats).
SparseTensor Mul(const SparseTensor& a, const Tensor& b, const std::vector<int64_t>& strides,
                 const char* op);

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_DEVICE_OPS_H_
