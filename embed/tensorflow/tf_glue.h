// embed/tensorflow/tf_glue.h: what every tensorkit op kernel in TensorFlow shares.
//
// Glossary
//   RunKernel    the one way a kernel body runs: inside the op's intra-op thread budget, with
//                every tensorkit::Error turned into an InvalidArgument status carrying the same
//                message and every other exception into an Internal status, so that nothing
//                escapes Compute() (an escaping exception takes the TensorFlow process down).
//   wrap         a tensorkit Tensor over a TensorFlow tensor's buffer (WrapExternal): no copy.
//                The TensorFlow tensor must outlive it, which holds within one Compute().
//   bit dtype    the tensorkit dtype whose elements have the size of a TensorFlow dtype's, for
//                operations that only move elements (reorder, scatter, concatenation): uint32
//                moves as int32, complex64 as int64, qint8 as int8. Dtypes without one
//                (complex128, string, resource, variant) go through positions: tensorkit sorts
//                or scatters int64 positions and the kernel copies the elements itself with
//                TensorFlow's own element copy (DispatchByPosition).
#ifndef TENSORKIT_EMBED_TENSORFLOW_TF_GLUE_H_
#define TENSORKIT_EMBED_TENSORFLOW_TF_GLUE_H_

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/framework/resource_handle.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/variant.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {

namespace tfw = ::tensorflow;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// A TensorFlow status that stopped a kernel body (a failed allocate_output), passed on as is.
struct StatusError : std::exception {
  explicit StatusError(absl::Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return "TensorFlow status"; }
  absl::Status status;
};

// Runs body() as the kernel of `ctx` (see the glossary); a failure becomes ctx's status.
template <typename Body>
void RunKernel(tfw::OpKernelContext* ctx, const Body& body);

// The tensorkit dtype that moves `dt`'s elements bit for bit (see the glossary), if any.
std::optional<DType> BitDType(tfw::DataType dt);
// The tensorkit dtype with `dt`'s arithmetic, if any (unsigned integers sum as signed ones of
// the same width: addition modulo 2^bits is the same bit pattern).
std::optional<DType> SumDType(tfw::DataType dt);

// The huge-page hint of tensorkit's own large blocks, for a TensorFlow tensor whose fresh pages
// tensorkit touches first (plain elements only: TensorFlow constructed the others).
void AdviseFreshPages(const tfw::Tensor& t);

// A tensorkit Tensor over t's buffer with t's dims (or `dims` when given), as dtype `dt`.
Tensor Wrap(const tfw::Tensor& t, DType dt, std::optional<std::vector<int64_t>> dims = {});
// Output `index` of dims `dims`, allocated by TensorFlow (allocate_output).
tfw::Tensor* AllocateTf(tfw::OpKernelContext* ctx, int index, const std::vector<int64_t>& dims);
// The same, wrapped as dtype `dt`: tensorkit writes TensorFlow's buffer in place.
Tensor AllocateOutput(tfw::OpKernelContext* ctx, int index, const std::vector<int64_t>& dims,
                      DType dt);
// 0, 1, ..., rank - 1: the standard (row-major) order TensorFlow's sparse ops assume.
std::vector<int> StdOrder(int rank);
// The elements of a 1-D (or scalar, when `allow_scalar`) int32 or int64 tensor, named `what`
// in the error for any other shape.
std::vector<int64_t> IntVector(const tfw::Tensor& t, const char* op, const char* what,
                               bool allow_scalar = false);
// A dense shape from a 1-D int32 or int64 tensor named `what`: every dim >= 0 and their product
// within int64 (TensorFlow's shape advisories), else an Error naming the dims.
std::vector<int64_t> ShapeVector(const tfw::Tensor& t, const char* op, const char* what);
// Throws kInvalidArgument naming `what`, the dims and `fix` when the product of the (non-negative)
// dims overflows int64, as TensorFlow refuses such shapes.
void CheckVolumeFits(const std::vector<int64_t>& dims, const char* op, const char* what,
                     const char* fix = "");
// The checks of a sparse input given as indices [nnz, rank], values [nnz] and a 1-D
// dense_shape: first their ranks (a matrix, a vector, a vector), then, once the op has read the
// dense shape (ShapeVector) and checked what it asks of it, that the three agree. Errors name
// the op and the shapes.
void CheckSparseInputRanks(const tfw::Tensor& indices, const tfw::Tensor& values,
                           const tfw::Tensor& dense_shape, const char* op);
void CheckSparseInputAgrees(const tfw::Tensor& indices, const tfw::Tensor& values, size_t rank,
                            const char* op);
// A contiguous int64 [rows, cols] copy of int32 indices, or the int64 buffer wrapped as is.
Tensor IndicesAsInt64(const tfw::Tensor& t, int64_t rows, int64_t cols);
// st with axes merged: new axis g is the row-major position of st's coordinates on the axes
// groups[g] (its dim the product of theirs). For dense results of more than kMaxAxes axes,
// which a tensorkit Tensor cannot hold but whose TensorFlow buffer is the same with merged
// axes. st's indices must be within its shape (check first); the order becomes unknown.
SparseTensor FoldAxes(const SparseTensor& st, const std::vector<std::vector<int>>& groups);
// 0, 1, ..., n - 1 as int64 (the positions that stand in for values without a bit dtype).
Tensor Positions(int64_t n, int64_t first = 0);
// Calls f.template operator()<T>() with the C++ element type T of `dt`, one of the dtypes
// without a bit dtype (string, complex128, resource, variant); `op` names the caller in the
// error for any other dtype.
template <typename F>
void DispatchByPosition(tfw::DataType dt, const char* op, const F& f);
// out[i] = in[perm[i]] for values without a bit dtype.
void GatherByPosition(const tfw::Tensor& in, const Tensor& perm, tfw::Tensor* out);
// Sets element i of the string tensor `out` to get(i) (a std::string_view) for every i, in
// parallel (each assign may allocate: long strings live on the heap).
template <typename Get>
void AssignStrings(tfw::Tensor* out, const Get& get);
// "[2,3]": a TensorFlow shape as the messages show it.
std::string ShapeText(const tfw::Tensor& t);

// The kernels register TensorFlow's own dtype lists (tensorflow/core/framework/register_types.h)
// wherever TensorFlow's kernel of the same op does, so that the dtypes stay exactly TensorFlow's.

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename Get>
void AssignStrings(tfw::Tensor* out, const Get& get) {
  auto o = out->flat<tfw::tstring>();
  ParallelFor(0, out->NumElements(), GrainFor(32), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const std::string_view s = get(i);
      o(i).assign(s.data(), s.size());
    }
  });
}

template <typename Body>
void RunKernel(tfw::OpKernelContext* ctx, const Body& body) {
  try {
    const auto* workers = ctx->device()->tensorflow_cpu_worker_threads();
    const int budget = workers != nullptr && workers->num_threads > 0 ? workers->num_threads : 1;
    RunWithThreadLimit(budget, [&] { body(); });
  } catch (const StatusError& e) {
    ctx->SetStatus(e.status);
  } catch (const Error& e) {
    ctx->SetStatus(absl::InvalidArgumentError(e.what()));
  } catch (const std::exception& e) {
    ctx->SetStatus(absl::InternalError(ctx->op_kernel().type_string() + ": " + e.what()));
  } catch (...) {
    ctx->SetStatus(absl::InternalError(ctx->op_kernel().type_string() + ": unknown C++ exception"));
  }
}

template <typename F>
void DispatchByPosition(tfw::DataType dt, const char* op, const F& f) {
  switch (dt) {
    case tfw::DT_STRING:
      return f.template operator()<tfw::tstring>();
    case tfw::DT_COMPLEX128:
      return f.template operator()<tfw::complex128>();
    case tfw::DT_RESOURCE:
      return f.template operator()<tfw::ResourceHandle>();
    case tfw::DT_VARIANT:
      return f.template operator()<tfw::Variant>();
    default:
      Throw(ErrorCode::kInternal, op, ": dtype ", tfw::DataTypeString(dt),
            " moves as a bit dtype, not by position");
  }
}

}  // namespace tensorkit::tf

#endif  // TENSORKIT_EMBED_TENSORFLOW_TF_GLUE_H_
