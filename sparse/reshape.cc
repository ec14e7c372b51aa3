// Reshape: the same entries in another dense shape with as many elements (TensorFlow's
// SparseReshape). Each entry keeps its row-major position, so the work is one pass that turns
// every index row into that position and back into the new shape's coordinates.
#include <algorithm>

#include "tensorkit/common/fast_div.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/reshape_internal.h"
#include "tensorkit/sparse/sparse_ops.h"

namespace tensorkit {

namespace si = sparse_internal;

namespace {

// The product of dims, or an Error naming `what` when it overflows int64.
int64_t ElementCount(const std::vector<int64_t>& dims, const char* op, const char* what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    TK_CHECK(!__builtin_mul_overflow(n, d, &n), kInvalidArgument, op, ": the ", what, " ",
             ShapeString(dims), " has more elements than int64 can count");
  }
  return n;
}

// Row-major strides of dims (the last axis 1).
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int a = static_cast<int>(dims.size()) - 2; a >= 0; --a) s[a] = s[a + 1] * dims[a + 1];
  return s;
}

// The CPU pass: bounds checked while each row is converted (nothing is trusted), rows written
// straight into `out`.
void ReshapeOnCpu(const Tensor& idx, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& new_dims, int64_t* out, const char* op) {
  const int64_t nnz = idx.Dim(0);
  const int rank = static_cast<int>(shape.size());
  const int new_rank = static_cast<int>(new_dims.size());
  const int64_t* in = idx.data<int64_t>();
  if (nnz == 0) return;
  // Without elements every entry is outside the shape; name the first one.
  for (int64_t d : shape) {
    if (d == 0) si::ThrowOutOfBounds(op, in, 0, shape);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(shape);
  const std::vector<int64_t> out_strides = RowMajorStrides(new_dims);
  std::vector<FastDivider> div(static_cast<size_t>(new_rank));
  for (int b = 0; b < new_rank; ++b) div[b] = FastDivider(static_cast<uint64_t>(out_strides[b]));
  auto convert = [&](int64_t b, int64_t e) {
    bool ok = true;
    for (int64_t i = b; i < e; ++i) {
      const int64_t* row = in + i * rank;
      uint64_t pos = 0;
      for (int a = 0; a < rank; ++a) {
        ok &= static_cast<uint64_t>(row[a]) < static_cast<uint64_t>(shape[a]);
        pos += static_cast<uint64_t>(row[a]) * static_cast<uint64_t>(in_strides[a]);
      }
      int64_t* o = out + i * new_rank;
      for (int c = 0; c + 1 < new_rank; ++c) {
        const uint64_t q = div[c].Divide(pos);
        o[c] = static_cast<int64_t>(q);
        pos -= q * static_cast<uint64_t>(out_strides[c]);
      }
      if (new_rank > 0) o[new_rank - 1] = static_cast<int64_t>(pos);
    }
    return ok;
  };
  const int64_t bad = FirstFailure(
      nnz, convert, [&](int64_t i) { return si::OutOfBounds(in + i * rank, shape.data(), rank); });
  if (bad >= 0) si::ThrowOutOfBounds(op, in, bad, shape);
}

}  // namespace

namespace sparse_internal {

// The device path, in the dense engine (any device; the CPU uses the fused pass above): the
// positions are the index matrix times the strides summed over the axes, then each coordinate
// is a division and the remainder carries on. The caller has checked the bounds.
void ReshapeInEngine(const Tensor& idx, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& new_dims, Tensor* out) {
  const Device device = idx.device();
  const int64_t nnz = idx.Dim(0);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t new_rank = static_cast<int64_t>(new_dims.size());
  if (nnz == 0 || new_rank == 0) return;
  Tensor pos = Tensor::Zeros({nnz, 1}, DType::kInt64, device);
  if (rank > 0) {
    const Tensor strides = Tensor::FromVector(RowMajorStrides(shape), {1, rank}).To(device);
    AddProduct(1, 0, idx, strides, &pos);  // output dim 1 on axis 1: summed over the axes
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(new_dims);
  Tensor q = Tensor::Empty({nnz, 1}, DType::kInt64, device);
  for (int64_t c = 0; c + 1 < new_rank; ++c) {
    const Tensor stride = Tensor::FromScalar<int64_t>(out_strides[c]).To(device);
    Div(pos, stride, &q);
    Tensor column = Slice(*out, 1, c, c + 1);
    Copy(q, &column);
    Mul(q, stride, &q);
    Sub(pos, q, &pos);
  }
  Tensor last = Slice(*out, 1, new_rank - 1, new_rank);
  Copy(pos, &last);
}

}  // namespace sparse_internal

std::vector<int64_t> ReshapedDims(const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& new_shape, const char* op) {
  for (size_t a = 0; a < shape.size(); ++a) {
    TK_CHECK(shape[a] >= 0, kInvalidArgument, op, ": the input shape ", ShapeString(shape),
             " has a negative dim at axis ", a);
  }
  const int64_t size = ElementCount(shape, op, "input shape");
  int unknown = -1;
  int64_t known = 1;
  for (size_t b = 0; b < new_shape.size(); ++b) {
    const int64_t d = new_shape[b];
    if (d == -1) {
      TK_CHECK(unknown < 0, kInvalidArgument, op, ": the new shape ", ShapeString(new_shape),
               " has more than one -1 (axes ", unknown, " and ", b,
               "); only one dim may be inferred");
      unknown = static_cast<int>(b);
      continue;
    }
    TK_CHECK(d >= 0, kInvalidArgument, op, ": the new shape ", ShapeString(new_shape), " has dim ",
             d, " at axis ", b, "; dims must be >= 0, or -1 for one inferred dim");
    TK_CHECK(!__builtin_mul_overflow(known, d, &known), kInvalidArgument, op, ": the new shape ",
             ShapeString(new_shape), " has more elements than int64 can count");
  }
  std::vector<int64_t> dims = new_shape;
  if (unknown >= 0) {
    TK_CHECK(known > 0, kInvalidArgument, op, ": cannot infer the -1 of the new shape ",
             ShapeString(new_shape), " from the input shape ", ShapeString(shape),
             ": the other dims multiply to 0");
    TK_CHECK(size % known == 0, kInvalidArgument, op, ": the input shape ", ShapeString(shape),
             " has ", size, " elements, which is not a multiple of ", known,
             ", the product of the known dims of the new shape ", ShapeString(new_shape));
    dims[unknown] = size / known;
  }
  TK_CHECK(unknown >= 0 || known == size, kInvalidArgument, op, ": the input shape ",
           ShapeString(shape), " has ", size, " elements but the new shape ",
           ShapeString(new_shape), " has ", known, "; they must be equal");
  return dims;
}

void ReshapeIndicesInto(const SparseTensor& st, const std::vector<int64_t>& new_dims, Tensor* out,
                        const char* op) {
  si::CheckCreated(st, op);
  const int64_t nnz = st.nnz();
  const int64_t new_rank = static_cast<int64_t>(new_dims.size());
  TK_CHECK(out != nullptr && out->dtype() == DType::kInt64 && out->IsContiguous() &&
               out->Dims() == (std::vector<int64_t>{nnz, new_rank}) && out->device() == st.device(),
           kInvalidArgument, op, ": the output indices must be a contiguous int64 tensor [", nnz,
           " ", new_rank, "] on ", st.device());
  if (OnCuda(st.indices())) return sparse_cuda::ReshapeIndices(st, new_dims, out, op);
  ReshapeOnCpu(st.indices().HostContiguous(), st.shape(), new_dims, out->data<int64_t>(), op);
}

SparseTensor Reshape(const SparseTensor& st, const std::vector<int64_t>& new_shape) {
  const char* op = "Reshape";
  si::CheckCreated(st, op);
  const std::vector<int64_t> dims = ReshapedDims(st.shape(), new_shape, op);
  const int new_rank = static_cast<int>(dims.size());
  Tensor idx = Tensor::Empty({st.nnz(), new_rank}, DType::kInt64, st.device());
  ReshapeIndicesInto(st, dims, &idx, op);
  // Row-major positions are kept, so row-major sortedness carries over.
  std::vector<int> order;
  bool row_major = st.OrderKnown();
  for (int a = 0; row_major && a < st.rank(); ++a) row_major = st.order()[a] == a;
  if (row_major) {
    order.resize(static_cast<size_t>(new_rank));
    for (int b = 0; b < new_rank; ++b) order[b] = b;
  }
  return SparseTensor::Create(idx, st.values(), dims, order);
}

}  // namespace tensorkit
