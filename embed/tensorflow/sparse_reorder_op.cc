// TensorkitSparseReorder: tf.raw_ops.SparseReorder on tensorkit's radix sort.
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/embed/tensorflow/tf_outputs.h"
#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;

REGISTER_OP("TensorkitSparseReorder")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(0));
      c->set_output(1, c->input(1));
      return absl::OkStatus();
    });

class SparseReorderKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseReorder";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(1);
      TK_CHECK(ind.dims() == 2, kInvalidArgument, op,
               ": input_indices must be a matrix [nnz, rank], got shape ", ShapeText(ind));
      TK_CHECK(vals.dims() == 1, kInvalidArgument, op,
               ": input_values must be a vector [nnz], got shape ", ShapeText(vals));
      const std::vector<int64_t> shape = IntVector(ctx->input(2), op, "input_shape");
      const int64_t nnz = ind.dim_size(0);
      const int rank = static_cast<int>(shape.size());
      TK_CHECK(ind.dim_size(1) == rank && vals.dim_size(0) == nnz, kInvalidArgument, op,
               ": input_indices ", ShapeText(ind), ", input_values ", ShapeText(vals),
               " and input_shape of ", rank, " dims disagree; they need [nnz, ", rank, "], [nnz]");
      const std::optional<DType> bit = BitDType(vals.dtype());
      const std::vector<int> order = StdOrder(rank);
      SparseTensor st = SparseTensor::Create(Wrap(ind, DType::kInt64),
                                             bit ? Wrap(vals, *bit) : Positions(nnz), shape, order);
      if (st.IndicesValid()) {  // sorted, in bounds, no repeats: the inputs are the outputs
        ctx->set_output(0, ind);
        ctx->set_output(1, vals);
        return;
      }
      // Values without a bit dtype sort as positions (scratch) and are gathered after.
      TfOutputs out(ctx, {0, bit ? 1 : -1});
      ReorderInto(st, order, out, op);
      if (!bit) GatherByPosition(vals, out.Scratch(1), AllocateTf(ctx, 1, {nnz}));
    });
  }
};

#define TENSORKIT_REGISTER(T)                                                                 \
  REGISTER_KERNEL_BUILDER(                                                                    \
      Name("TensorkitSparseReorder").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      SparseReorderKernel);
// TensorFlow's CPU kernel's dtypes: every one, resource and variant handles included.
TF_CALL_ALL_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
