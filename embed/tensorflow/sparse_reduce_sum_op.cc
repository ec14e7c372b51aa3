// TensorkitSparseReduceSum: tf.raw_ops.SparseReduceSum on tensorkit's grouped reduction (no
// sort of the entries, bounds checked).
#include <algorithm>

#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/reduce.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;

REGISTER_OP("TensorkitSparseReduceSum")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Input("reduction_axes: int32")
    .Output("output: T")
    .Attr("keep_dims: bool = False")
    .Attr("T: numbertype")
    .SetShapeFn(::tensorflow::shape_inference::UnknownShape);

class SparseReduceSumKernel : public tfw::OpKernel {
 public:
  explicit SparseReduceSumKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseReduceSum";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(1);
      const std::vector<int64_t> shape = ShapeVector(ctx->input(2), op, "input_shape");
      const std::vector<int64_t> axes_in =
          IntVector(ctx->input(3), op, "reduction_axes", /*allow_scalar=*/true);
      const int rank = static_cast<int>(shape.size());
      TK_CHECK(ind.dims() == 2 && ind.dim_size(1) == rank, kInvalidArgument, op,
               ": input_indices must be [nnz, ", rank, "] for input_shape ", ShapeString(shape),
               ", got shape ", ShapeText(ind));
      TK_CHECK(vals.dims() == 1 && vals.dim_size(0) == ind.dim_size(0), kInvalidArgument, op,
               ": input_values must be [", ind.dim_size(0), "], got shape ", ShapeText(vals));
      // Axes as TensorFlow takes them: negative ones count from the end, repeats are allowed.
      std::vector<bool> reduced(static_cast<size_t>(rank), false);
      for (int64_t a : axes_in) {
        TK_CHECK(a >= -rank && a < rank, kInvalidArgument, op, ": reduction axis ", a,
                 " is out of range for ", rank, " dims (use -", rank, " .. ", rank - 1, ")");
        reduced[(a + rank) % rank] = true;
      }
      std::vector<int> axes;
      std::vector<int64_t> out_dims;
      for (int a = 0; a < rank; ++a) {
        if (reduced[a]) axes.push_back(a);
        if (!reduced[a] || keep_dims_) out_dims.push_back(reduced[a] ? 1 : shape[a]);
      }
      Tensor indices = Wrap(ind, DType::kInt64);
      const int64_t nnz = ind.dim_size(0);
      std::vector<int64_t> in_shape = shape;
      int64_t size = 1;  // of the output, seen flat: its buffer whatever its rank
      for (int64_t d : out_dims) size *= d;
      if (rank - static_cast<int>(axes.size()) > kMaxAxes) {
        // More kept axes than a tensorkit Tensor has: they merge into one (the output's
        // row-major position), the reduced ones stay.
        const SparseTensor whole = SparseTensor::Create(indices, Positions(nnz), shape);
        CheckIndexBounds(whole, op);  // before merging, which could hide a bad coordinate
        std::vector<std::vector<int>> groups(1);
        for (int a = 0; a < rank; ++a) {
          if (!reduced[a]) groups[0].push_back(a);
        }
        for (int a : axes) groups.push_back({a});
        const SparseTensor folded = FoldAxes(whole, groups);
        indices = folded.indices();
        in_shape = folded.shape();
        for (size_t g = 1; g < groups.size(); ++g) axes[g - 1] = static_cast<int>(g);
      }
      auto reduce_into = [&](const Tensor& values, Tensor* out) {
        const Tensor sums = ReduceSum(SparseTensor::Create(indices, values, in_shape), axes);
        Copy(*View(sums, {size}), out);
      };
      if (const std::optional<DType> dt = SumDType(vals.dtype())) {
        Tensor out = Wrap(*AllocateTf(ctx, 0, out_dims), *dt, std::vector<int64_t>{size});
        reduce_into(Wrap(vals, *dt), &out);
        return;
      }
      // Complex: the real and the imaginary halves are two real sums (strided views).
      const DType half = vals.dtype() == tfw::DT_COMPLEX64 ? DType::kFloat32 : DType::kFloat64;
      Tensor v = Wrap(vals, half, std::vector<int64_t>{nnz, 2});
      Tensor out = Wrap(*AllocateTf(ctx, 0, out_dims), half, std::vector<int64_t>{size, 2});
      for (int which = 0; which < 2; ++which) {
        Tensor part = Select(out, 1, which);
        reduce_into(Select(v, 1, which), &part);
      }
    });
  }

 private:
  bool keep_dims_ = false;
};

#define TENSORKIT_REGISTER(T)                                                                   \
  REGISTER_KERNEL_BUILDER(                                                                      \
      Name("TensorkitSparseReduceSum").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      SparseReduceSumKernel);
// TensorFlow's CPU kernel's dtypes.
TF_CALL_NUMBER_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
