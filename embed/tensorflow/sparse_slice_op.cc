// TensorkitSparseSlice and TensorkitSparseSplit: tf.raw_ops.SparseSlice and SparseSplit on
// tensorkit's parallel box selection and one-pass split.
#include <algorithm>

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
// values without a bit dtype are st's positions into `vals`.
void SetSparseOutputs(tfw::OpKernelContext* ctx, const SparseTensor& st, const tfw::Tensor& vals,
                      int first, int stride) {
  const int64_t nnz = st.nnz();
  const int rank = st.rank();
  Tensor out_indices = AllocateOutput(ctx, first, {nnz, rank}, DType::kInt64);
  Copy(st.indices(), &out_indices);
  if (BitDType(vals.dtype())) {
    Tensor out_values = AllocateOutput(ctx, first + stride, {nnz}, st.dtype());
    Copy(st.values(), &out_values);
  } else {
    GatherByPosition(vals, st.values(), AllocateTf(ctx, first + stride, {nnz}));
  }
  Tensor out_shape = AllocateOutput(ctx, first + 2 * stride, {rank}, DType::kInt64);
  for (int a = 0; a < rank; ++a) out_shape.data<int64_t>()[a] = st.shape()[a];
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
      // TensorFlow's box: [start, start + size) cut at the shape; a start past the end gives an
      // empty dim.
      std::vector<int64_t> box_start(rank), box_size(rank);
      for (int a = 0; a < rank; ++a) {
        TK_CHECK(start[a] >= 0 && size[a] >= 0, kInvalidArgument, op, ": start ",
                 ShapeString(start), " and size ", ShapeString(size),
                 " must be non-negative (axis ", a, ")");
        const int64_t dim = st.shape()[a];
        box_start[a] = std::min(start[a], dim);
        box_size[a] = std::min(size[a], dim - box_start[a]);
      }
      SetSparseOutputs(ctx, Slice(st, box_start, box_size), ctx->input(1), 0, 1);
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
