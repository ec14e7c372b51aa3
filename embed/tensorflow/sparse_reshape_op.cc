// TensorkitSparseReshape: tf.raw_ops.SparseReshape, one parallel pass of position arithmetic.
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/sparse_ops.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseReshape")
    .Input("input_indices: int64")
    .Input("input_shape: int64")
    .Input("new_shape: int64")
    .Output("output_indices: int64")
    .Output("output_shape: int64")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle indices, new_shape;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &new_shape));
      c->set_output(0, c->Matrix(c->Dim(indices, 0), c->Dim(new_shape, 0)));
      c->set_output(1, new_shape);
      return absl::OkStatus();
    });

class SparseReshapeKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseReshape";
      const tfw::Tensor& ind = ctx->input(0);
      TK_CHECK(ind.dims() == 2, kInvalidArgument, op,
               ": input_indices must be a matrix [nnz, rank], got shape ", ShapeText(ind));
      TK_CHECK(ctx->input(1).dims() == 1, kInvalidArgument, op,
               ": input_shape must be a vector, got shape ", ShapeText(ctx->input(1)));
      TK_CHECK(ctx->input(2).dims() == 1, kInvalidArgument, op,
               ": new_shape must be a vector, got shape ", ShapeText(ctx->input(2)));
      const std::vector<int64_t> shape = ShapeVector(ctx->input(1), op, "input_shape");
      const std::vector<int64_t> new_shape = IntVector(ctx->input(2), op, "new_shape");
      const int64_t nnz = ind.dim_size(0);
      TK_CHECK(ind.dim_size(1) == static_cast<int64_t>(shape.size()), kInvalidArgument, op,
               ": input_indices ", ShapeText(ind), " index ", ind.dim_size(1),
               " dims but input_shape has ", shape.size(), "; they must agree");
      const std::vector<int64_t> dims = ReshapedDims(shape, new_shape, op);
      const int64_t new_rank = static_cast<int64_t>(dims.size());
      Tensor out_shape = AllocateOutput(ctx, 1, {new_rank}, DType::kInt64);
      for (int64_t b = 0; b < new_rank; ++b) out_shape.data<int64_t>()[b] = dims[b];
      const SparseTensor st = SparseTensor::Create(Wrap(ind, DType::kInt64),
                                                   Tensor::Empty({nnz}, DType::kUInt8), shape);
      if (dims == shape) {  // the same shape: the indices pass through, bounds still checked
        CheckIndexBounds(st, op);
        ctx->set_output(0, ind);
        return;
      }
      Tensor out_indices = AllocateOutput(ctx, 0, {nnz, new_rank}, DType::kInt64);
      ReshapeIndicesInto(st, dims, &out_indices, op);
    });
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorkitSparseReshape").Device(::tensorflow::DEVICE_CPU),
                        SparseReshapeKernel);

}  // namespace
}  // namespace tensorkit::tf
