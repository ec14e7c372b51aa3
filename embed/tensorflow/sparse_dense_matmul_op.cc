// TensorkitSparseTensorDenseMatMul: tf.raw_ops.SparseTensorDenseMatMul on tensorkit's parallel
// sparse-dense product (TensorFlow's CPU kernel runs on one thread).
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/sparse_ops.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseTensorDenseMatMul")
    .Input("a_indices: Tindices")
    .Input("a_values: T")
    .Input("a_shape: int64")
    .Input("b: T")
    .Output("product: T")
    .Attr("T: type")
    .Attr("Tindices: {int32,int64} = DT_INT64")
    .Attr("adjoint_a: bool = false")
    .Attr("adjoint_b: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      bool adjoint_b = false;
      TF_RETURN_IF_ERROR(c->GetAttr("adjoint_b", &adjoint_b));
      ShapeHandle b;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(3), 2, &b));
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, c->Dim(b, adjoint_b ? 0 : 1)));
      return absl::OkStatus();
    });

class SparseDenseMatMulKernel : public tfw::OpKernel {
 public:
  explicit SparseDenseMatMulKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint_a", &adjoint_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint_b", &adjoint_b_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseTensorDenseMatMul";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(1);
      const tfw::Tensor& b = ctx->input(3);
      TK_CHECK(b.dims() == 2, kInvalidArgument, op, ": b must be a matrix, got shape ",
               ShapeText(b));
      const std::vector<int64_t> shape = IntVector(ctx->input(2), op, "a_shape");
      TK_CHECK(shape.size() == 2, kInvalidArgument, op, ": a_shape must have 2 elements, got ",
               ShapeString(shape));
      TK_CHECK(vals.dims() == 1, kInvalidArgument, op, ": a_values must be a vector, got shape ",
               ShapeText(vals));
      TK_CHECK(ind.dims() == 2 && ind.dim_size(1) == 2 && ind.dim_size(0) == vals.dim_size(0),
               kInvalidArgument, op, ": a_indices must be [nnz, 2] with nnz = ", vals.dim_size(0),
               " (the length of a_values), got shape ", ShapeText(ind));
      const int64_t rows = shape[adjoint_a_ ? 1 : 0], inner_a = shape[adjoint_a_ ? 0 : 1];
      const int64_t inner_b = b.dim_size(adjoint_b_ ? 1 : 0), cols = b.dim_size(adjoint_b_ ? 0 : 1);
      TK_CHECK(inner_a == inner_b, kInvalidArgument, op, ": cannot multiply a ", ShapeString(shape),
               adjoint_a_ ? " (adjoint)" : "", " by b ", ShapeText(b),
               adjoint_b_ ? " (adjoint)" : "", ": inner dims ", inner_a, " and ", inner_b,
               " differ; check adjoint_a and adjoint_b");
      const Tensor indices = IndicesAsInt64(ind, ind.dim_size(0), 2);
      const bool complex = vals.dtype() == tfw::DT_COMPLEX64 || vals.dtype() == tfw::DT_COMPLEX128;
      if (!complex) {
        const DType dt = *BitDType(vals.dtype());
        SparseTensor a = SparseTensor::Create(indices, Wrap(vals, dt), shape);
        if (adjoint_a_) a = Transpose(a, 0, 1);  // real adjoint: a transposed view
        Tensor bt = Wrap(b, dt);
        if (adjoint_b_) bt = Transpose(bt, 0, 1);
        Tensor out = AllocateOutput(ctx, 0, {rows, cols}, dt);
        SparseDenseProduct(1, 0, a, bt, &out);
        return;
      }
      // Complex as four real products over the real and imaginary halves (strided views):
      // re = ar br - ai bi and im = ar bi + ai br, where an adjoint negates that operand's ai/bi.
      const DType half = vals.dtype() == tfw::DT_COMPLEX64 ? DType::kFloat32 : DType::kFloat64;
      const int64_t nnz = vals.dim_size(0);
      Tensor v = Wrap(vals, half, std::vector<int64_t>{nnz, 2});
      Tensor bv = Wrap(b, half, std::vector<int64_t>{b.dim_size(0), b.dim_size(1), 2});
      Tensor out =
          Wrap(*AllocateTf(ctx, 0, {rows, cols}), half, std::vector<int64_t>{rows, cols, 2});
      auto part = [&](const Tensor& t, int which) {
        Tensor p = Select(t, 2, which);
        return adjoint_b_ ? Transpose(p, 0, 1) : p;
      };
      auto sparse_part = [&](int which) {
        SparseTensor a = SparseTensor::Create(indices, Select(v, 1, which), shape);
        return adjoint_a_ ? Transpose(a, 0, 1) : a;
      };
      const SparseTensor ar = sparse_part(0), ai = sparse_part(1);
      const Tensor br = part(bv, 0), bi = part(bv, 1);
      Tensor re = Select(out, 2, 0), im = Select(out, 2, 1);
      const double sa = adjoint_a_ ? -1 : 1, sb = adjoint_b_ ? -1 : 1;
      SparseDenseProduct(1, 0, ar, br, &re);
      SparseDenseProduct(-sa * sb, 1, ai, bi, &re);
      SparseDenseProduct(sb, 0, ar, bi, &im);
      SparseDenseProduct(sa, 1, ai, br, &im);
    });
  }

 private:
  bool adjoint_a_ = false;
  bool adjoint_b_ = false;
};

#define TENSORKIT_REGISTER_WITH(T, I)                              \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseTensorDenseMatMul") \
                              .Device(::tensorflow::DEVICE_CPU)    \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<I>("Tindices")       \
                              .HostMemory("a_shape"),              \
                          SparseDenseMatMulKernel);
#define TENSORKIT_REGISTER(T) \
  TENSORKIT_REGISTER_WITH(T, int32_t) TENSORKIT_REGISTER_WITH(T, int64_t)
// TensorFlow's CPU kernel's dtypes.
TENSORKIT_REGISTER(int32_t)
TENSORKIT_REGISTER(Eigen::half)
TENSORKIT_REGISTER(::tensorflow::bfloat16)
TENSORKIT_REGISTER(float)
TENSORKIT_REGISTER(double)
TENSORKIT_REGISTER(::tensorflow::complex64)
TENSORKIT_REGISTER(::tensorflow::complex128)
#undef TENSORKIT_REGISTER
#undef TENSORKIT_REGISTER_WITH

}  // namespace
}  // namespace tensorkit::tf
