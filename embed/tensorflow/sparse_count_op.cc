// TensorkitSparseCountSparseOutput: tf.raw_ops.SparseCountSparseOutput on tensorkit's
// CountSparse (rows grouped stably, each row's ids sorted and run-length coded, in parallel),
// with every malformed input of the advisories (CVE-2020-15197, CVE-2022-21740, CVE-2022-21738)
// refused as InvalidArgument, including those TensorFlow accepts (negative dims, weights of
// another non-empty shape). Dense shapes of rank 3 or more count as TensorFlow's kernel counts
// them: one row per index[0], the output [dense_shape[0], width] of rank 2.
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/embed/tensorflow/tf_outputs.h"
#include "tensorkit/features/counts.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseCountSparseOutput")
    .Input("indices: int64")
    .Input("values: T")
    .Input("dense_shape: int64")
    .Input("weights: output_type")
    .Attr("T: {int32, int64}")
    .Attr("minlength: int >= -1 = -1")
    .Attr("maxlength: int >= -1 = -1")
    .Attr("binary_output: bool")
    .Attr("output_type: {int32, int64, float, double}")
    .SetShapeFn([](InferenceContext* c) {
      // Only indices is checked (a matrix); the count is unknown. The output has 1 column for
      // ids of rank 1 and 2 for any higher rank (TensorFlow's shape function says `rank`
      // columns, which its kernel's rank-2 output of rank-3 ids contradicts).
      ShapeHandle indices;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
      const DimensionHandle rank = c->Dim(indices, 1);
      DimensionHandle out_rank = rank;
      if (c->ValueKnown(rank) && c->Value(rank) > 2) out_rank = c->MakeDim(2);
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, out_rank));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(2, c->Vector(out_rank));
      return absl::OkStatus();
    })
    .Output("output_indices: int64")
    .Output("output_values: output_type")
    .Output("output_dense_shape: int64");

template <typename T, typename W>
class SparseCountKernel : public tfw::OpKernel {
 public:
  explicit SparseCountKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("minlength", &min_length_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("maxlength", &max_length_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("binary_output", &binary_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseCountSparseOutput";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(1);
      const tfw::Tensor& w = ctx->input(3);
      CheckSparseInputRanks(ind, vals, ctx->input(2), op);
      const std::vector<int64_t> shape = ShapeVector(ctx->input(2), op, "dense_shape");
      const int64_t nnz = ind.dim_size(0);
      const int rank = static_cast<int>(shape.size());
      TK_CHECK(rank >= 1, kInvalidArgument, op,
               ": dense_shape has no dims; the ids must be of rank 1 ([L]) or more ([batch, ...])");
      CheckSparseInputAgrees(ind, vals, shape.size(), op);
      TK_CHECK(rank == 1 || shape[0] > 0, kInvalidArgument, op, ": dense_shape ",
               ShapeString(shape), " has no batch rows; the batch dim must be at least 1");
      const bool weighted = w.NumElements() > 0;
      TK_CHECK(!weighted || (w.dims() == 1 && w.dim_size(0) == nnz), kInvalidArgument, op,
               ": weights must be empty or of the values' shape [", nnz, "], got shape ",
               ShapeText(w));
      const SparseTensor ids =
          SparseTensor::Create(Wrap(ind, DType::kInt64), Wrap(vals, DTypeOf<T>), shape);
      const Tensor weights = weighted ? Wrap(w, DTypeOf<W>) : Tensor::Empty({0}, DTypeOf<W>);
      // The indices, values and dense shape (rank 1, or 2 for ids of rank 2 or more) are
      // written straight into TensorFlow's buffers and set as the outputs at the end.
      TfOutputs out(ctx);
      CountSparse(ids, weights, binary_, min_length_, max_length_, out);
    });
  }

 private:
  int64_t min_length_ = -1, max_length_ = -1;
  bool binary_ = false;
};

#define TENSORKIT_REGISTER(T, W)                                   \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseCountSparseOutput") \
                              .Device(::tensorflow::DEVICE_CPU)    \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<W>("output_type"),   \
                          SparseCountKernel<T, W>);
#define TENSORKIT_REGISTER_W(W)  \
  TENSORKIT_REGISTER(int32_t, W) \
  TENSORKIT_REGISTER(int64_t, W)
// TensorFlow's CPU kernel's dtypes: int32 or int64 ids, int32, int64, float or double weights.
TENSORKIT_REGISTER_W(int32_t)
TENSORKIT_REGISTER_W(int64_t)
TENSORKIT_REGISTER_W(float)
TENSORKIT_REGISTER_W(double)
#undef TENSORKIT_REGISTER_W
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
