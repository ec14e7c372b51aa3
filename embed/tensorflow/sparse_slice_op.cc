// TensorkitSparseSlice and TensorkitSparseSplit: tf.raw_ops.SparseSlice and SparseSplit on
// tensorkit's parallel box selection and one-pass split.
#include <algorithm>
#include <limits>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/sparse/sparse_ops.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseSlice")
    .Input("indices: int64")
    .Input("values: T")
    .Input("shape: int64")
    .Input("start: int64")
    .Input("size: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle shape;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &shape));
      DimensionHandle rank = c->Dim(shape, 0);
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, rank));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(2, shape);
      return absl::OkStatus();
    });

REGISTER_OP("TensorkitSparseSplit")
    .Input("split_dim: int64")
    .Input("indices: int64")
    .Input("values: T")
    .Input("shape: int64")
    .Output("output_indices: num_split * int64")
    .Output("output_values: num_split * T")
    .Output("output_shape: num_split * int64")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      int num_split = 0;
      TF_RETURN_IF_ERROR(c->GetAttr("num_split", &num_split));
      ShapeHandle shape;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(3), 1, &shape));
      DimensionHandle rank = c->Dim(shape, 0);
      for (int i = 0; i < num_split; ++i) {
        c->set_output(i, c->Matrix(InferenceContext::kUnknownDim, rank));
        c->set_output(num_split + i, c->Vector(InferenceContext::kUnknownDim));
        c->set_output(2 * num_split + i, shape);
      }
      return absl::OkStatus();
    });

// The sparse input of both ops: indices [nnz, rank], values [nnz], shape [rank] checked as
// TensorFlow checks them, with values by bit dtype or (other dtypes) by position.
SparseTensor SparseInput(const tfw::Tensor& ind, const tfw::Tensor& vals,
                         const tfw::Tensor& shape_t, const char* op) {
  TK_CHECK(ind.dims() == 2, kInvalidArgument, op,
           ": indices must be a matrix [nnz, rank], got shape ", ShapeText(ind));
  TK_CHECK(vals.dims() == 1, kInvalidArgument, op, ": values must be a vector [nnz], got shape ",
           ShapeText(vals));
  TK_CHECK(shape_t.dims() == 1, kInvalidArgument, op, ": shape must be a vector, got shape ",
           ShapeText(shape_t));
  const std::vector<int64_t> shape = ShapeVector(shape_t, op, "shape");
  const int64_t nnz = ind.dim_size(0);
  TK_CHECK(ind.dim_size(1) == static_cast<int64_t>(shape.size()) && vals.dim_size(0) == nnz,
           kInvalidArgument, op, ": indices ", ShapeText(ind), ", values ", ShapeText(vals),
           " and a shape of ", shape.size(), " dims disagree; they need [nnz, ", shape.size(),
           "], [nnz]");
  const std::optional<DType> bit = BitDType(vals.dtype());
  return SparseTensor::Create(Wrap(ind, DType::kInt64), bit ? Wrap(vals, *bit) : Positions(nnz),
                              shape);
}

// Output `first` (indices), first + stride (values) and first + 2 * stride (shape) from st;
// values without a bit dtype are st's positions into `vals`. `shift` (when not empty) is added
// to every index row as it is written, and `shape` (when not empty) is written as the dense shape
// in place of st's.
void SetSparseOutputs(tfw::OpKernelContext* ctx, const SparseTensor& st, const tfw::Tensor& vals,
                      int first, int stride, const std::vector<int64_t>& shift = {},
                      const std::vector<int64_t>& shape = {}) {
  const int64_t nnz = st.nnz();
  const int rank = st.rank();
  Tensor out_indices = AllocateOutput(ctx, first, {nnz, rank}, DType::kInt64);
  Copy(st.indices(), &out_indices);
  if (!shift.empty() && nnz > 0) {
    int64_t* rows = out_indices.data<int64_t>();
    ParallelFor(0, nnz, GrainFor(8 * rank), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        for (int a = 0; a < rank; ++a) rows[i * rank + a] += shift[a];
      }
    });
  }
  if (BitDType(vals.dtype())) {
    Tensor out_values = AllocateOutput(ctx, first + stride, {nnz}, st.dtype());
    Copy(st.values(), &out_values);
  } else {
    GatherByPosition(vals, st.values(), AllocateTf(ctx, first + stride, {nnz}));
  }
  Tensor out_shape = AllocateOutput(ctx, first + 2 * stride, {rank}, DType::kInt64);
  for (int a = 0; a < rank; ++a) {
    out_shape.data<int64_t>()[a] = shape.empty() ? st.shape()[a] : shape[a];
  }
}

// Note [TensorFlow's slice box]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// TensorFlow's SparseSlice takes any start and a size >= 0 on each axis. The output axis covers
// the coordinates [start, start + size) cut at the end of the input's dim, so its dim is
// max(0, min(size, dim - start)) and an entry at v becomes v - start. A start past the end gives
// an empty axis (its testLargeSize: start [2^62, -1] of a [1, 1] tensor is an empty [0, 2]); a
// negative start keeps the coordinates before 0 in the output, where no entry lies (start -1,
// size 3 of a dim 6 is a dim 3 whose first coordinate is empty). Here the entries come from the
// part of that box inside the tensor, [max(start, 0), min(start + size, dim)), and are shifted
// by the distance from start to where that part begins. start + size is computed without
// overflow: TensorFlow's own sum wraps for a start of 1 and a size of 2^63 - 1 and then returns
// no entries; here that box holds the entries from start to the end, as for any size that
// reaches past the end. An output shape of more elements than int64 counts (a start far below
// 0 with a large size) is refused, as TensorFlow refuses it.
struct SliceBox {
  std::vector<int64_t> start, size;  // the part inside the tensor, for tensorkit's Slice
  std::vector<int64_t> shift;        // added to its entries' indices; empty when all 0
  std::vector<int64_t> shape;        // the output's dense shape
};

SliceBox TensorFlowBox(const std::vector<int64_t>& start, const std::vector<int64_t>& size,
                       const std::vector<int64_t>& dims, const char* op) {
  const size_t rank = dims.size();
  SliceBox box{
      std::vector<int64_t>(rank), std::vector<int64_t>(rank), {}, std::vector<int64_t>(rank)};
  std::vector<int64_t> shift(rank, 0);
  bool shifted = false;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t s = start[a], z = size[a], d = dims[a];
    TK_CHECK(z >= 0, kInvalidArgument, op, ": size ", ShapeString(size),
             " has a negative entry on axis ", a, " (", z, "); a size must be >= 0");
    int64_t end = 0, room = 0;  // start + size and dim - start, saturated
    if (__builtin_add_overflow(s, z, &end)) end = std::numeric_limits<int64_t>::max();
    if (__builtin_sub_overflow(d, s, &room)) room = std::numeric_limits<int64_t>::max();
    const int64_t lo = std::clamp<int64_t>(s, 0, d);
    const int64_t hi = std::clamp<int64_t>(end, lo, d);
    box.start[a] = lo;
    box.size[a] = hi - lo;
    box.shape[a] = std::max<int64_t>(0, std::min(z, room));
    // An empty part has no entries to shift (and lo - s may not fit then).
    if (hi > lo && lo != s) {
      shift[a] = lo - s;
      shifted = true;
    }
  }
  if (shifted) box.shift = std::move(shift);
  // Only a negative start can make an axis longer than the input's.
  CheckVolumeFits(box.shape, op, "the output shape",
                  "; a negative start keeps its coordinates before 0: start at 0 instead");
  return box;
}

class SparseSliceKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseSlice";
      const SparseTensor st = SparseInput(ctx->input(0), ctx->input(1), ctx->input(2), op);
      const int rank = st.rank();
      for (int k : {3, 4}) {
        TK_CHECK(ctx->input(k).dims() == 1 && ctx->input(k).dim_size(0) == rank, kInvalidArgument,
                 op, ": ", k == 3 ? "start" : "size",
                 " must be a vector with one element per axis (", rank, "), got shape ",
                 ShapeText(ctx->input(k)));
      }
      const std::vector<int64_t> start = IntVector(ctx->input(3), op, "start");
      const std::vector<int64_t> size = IntVector(ctx->input(4), op, "size");
      // Note [TensorFlow's slice box]
      const SliceBox box = TensorFlowBox(start, size, st.shape(), op);
      SetSparseOutputs(ctx, Slice(st, box.start, box.size), ctx->input(1), 0, 1, box.shift,
                       box.shape);
    });
  }
};

class SparseSplitKernel : public tfw::OpKernel {
 public:
  explicit SparseSplitKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_split", &num_split_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseSplit";
      const tfw::Tensor& axis_t = ctx->input(0);
      TK_CHECK(axis_t.dims() == 0, kInvalidArgument, op, ": split_dim must be a scalar, got shape ",
               ShapeText(axis_t));
      const SparseTensor st = SparseInput(ctx->input(1), ctx->input(2), ctx->input(3), op);
      const int64_t rank = st.rank();
      int64_t axis = axis_t.scalar<int64_t>()();
      TK_CHECK(axis >= -rank && axis < rank, kInvalidArgument, op, ": split_dim ", axis,
               " is out of range for a tensor of rank ", rank, " (it must be in [", -rank, ", ",
               rank, "))");
      if (axis < 0) axis += rank;
      const int64_t dim = st.shape()[axis];
      TK_CHECK(num_split_ <= dim, kInvalidArgument, op, ": num_split ", num_split_,
               " is larger than dim ", dim, " of axis ", axis, " of shape ",
               ShapeString(st.shape()), "; it must be in [1, ", dim, "]");
      const std::vector<SparseTensor> pieces = Split(st, static_cast<int>(axis), num_split_);
      for (int i = 0; i < num_split_; ++i)
        SetSparseOutputs(ctx, pieces[i], ctx->input(2), i, num_split_);
    });
  }

 private:
  int num_split_ = 1;
};

#define TENSORKIT_REGISTER(T)                                                               \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("TensorkitSparseSlice").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      SparseSliceKernel);                                                                   \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("TensorkitSparseSplit").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      SparseSplitKernel);
// TensorFlow's CPU kernels' dtypes: every one, resource and variant handles included.
TF_CALL_ALL_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
