// TensorkitSparseFillEmptyRows and TensorkitSparseFillEmptyRowsGrad: tf.raw_ops.SparseFillEmptyRows
// and its gradient on tensorkit's FillEmptyRows (a parallel count per row, one prefix sum and a
// scatter) and FillEmptyRowsGrad.
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/embed/tensorflow/tf_outputs.h"
#include "tensorkit/features/segment.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseFillEmptyRows")
    .Input("indices: int64")
    .Input("values: T")
    .Input("dense_shape: int64")
    .Input("default_value: T")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("empty_row_indicator: bool")
    .Output("reverse_index_map: int64")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle indices, values, shape, unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &values));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &shape));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &unused));
      DimensionHandle nnz = c->Dim(indices, 0);
      TF_RETURN_IF_ERROR(c->Merge(nnz, c->Dim(values, 0), &nnz));
      DimensionHandle rank = c->Dim(indices, 1);
      TF_RETURN_IF_ERROR(c->Merge(rank, c->Dim(shape, 0), &rank));
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, rank));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(2, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(3, c->Vector(nnz));
      return absl::OkStatus();
    });

REGISTER_OP("TensorkitSparseFillEmptyRowsGrad")
    .Input("reverse_index_map: int64")
    .Input("grad_values: T")
    .Output("d_values: T")
    .Output("d_default_value: T")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle map, grad;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &map));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &grad));
      c->set_output(0, c->Vector(c->Dim(map, 0)));
      c->set_output(1, c->Scalar());
      return absl::OkStatus();
    });

// The default value as a Scalar that converts back to the same bits of the moving dtype `bit`.
Scalar DefaultScalar(const tfw::Tensor& def, DType bit) {
  const Tensor t = Wrap(def, bit, std::vector<int64_t>{});
  return Dispatch<kNumericDTypes>(bit, "TensorkitSparseFillEmptyRows", [&]<typename T>() -> Scalar {
    const T v = t.data<T>()[0];
    if constexpr (std::is_integral_v<T>) {
      return Scalar(static_cast<int64_t>(v));
    } else if constexpr (std::is_same_v<T, double>) {
      return Scalar(v);
    } else {  // float and the 16-bit floats, exact through float
      return Scalar(static_cast<double>(static_cast<float>(v)));
    }
  });
}

// out[i] = values[where[i]], or the default where `where` is -1 (dtypes without a bit dtype).
template <typename T>
void GatherOrDefault(const tfw::Tensor& values, const tfw::Tensor& def, const Tensor& where,
                     tfw::Tensor* out) {
  const T* v = values.flat<T>().data();
  const T fill = def.scalar<T>()();
  const int64_t* w = where.data<int64_t>();
  T* o = out->flat<T>().data();
  ParallelFor(0, where.NumElements(), GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = w[i] < 0 ? fill : v[w[i]];
  });
}

class FillEmptyRowsKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseFillEmptyRows";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(1);
      const tfw::Tensor& def = ctx->input(3);
      CheckSparseInputRanks(ind, vals, ctx->input(2), op);
      TK_CHECK(def.dims() == 0, kInvalidArgument, op,
               ": default_value must be a scalar, got shape ", ShapeText(def));
      const std::vector<int64_t> shape = ShapeVector(ctx->input(2), op, "dense_shape");
      const int64_t nnz = ind.dim_size(0);
      TK_CHECK(!shape.empty(), kInvalidArgument, op,
               ": dense_shape must have at least one dim (the rows)");
      CheckSparseInputAgrees(ind, vals, shape.size(), op);
      const std::optional<DType> bit = BitDType(vals.dtype());
      const SparseTensor st = SparseTensor::Create(Wrap(ind, DType::kInt64),
                                                   bit ? Wrap(vals, *bit) : Positions(nnz), shape);
      // The outputs are written straight into TensorFlow's buffers, the position values of
      // dtypes without a bit dtype excepted (scratch: they are gathered into the buffer after).
      TfOutputs out(ctx, {0, bit ? 1 : -1, 2, 3});
      const FillEmptyRowsResult r =
          FillEmptyRows(st, bit ? DefaultScalar(def, *bit) : Scalar(int64_t{-1}), out);
      if (!out.Made(0)) {  // nothing moved: the inputs are the outputs, as TensorFlow passes them
        ctx->set_output(0, ind);
        ctx->set_output(1, vals);
      } else if (!bit) {
        const Tensor where = r.output.values();
        tfw::Tensor* values_out = AllocateTf(ctx, 1, {r.output.nnz()});
        DispatchByPosition(vals.dtype(), op,
                           [&]<typename T>() { GatherOrDefault<T>(vals, def, where, values_out); });
      }
    });
  }
};

// d_values[i] = grad[map[i]] and the sum of the rest, for complex numbers (which tensorkit has
// no dtype for); the map was checked by FillEmptyRowsGrad on positions.
template <typename T>
void ComplexGrad(const tfw::Tensor& grad, const Tensor& picked, tfw::Tensor* d_values,
                 tfw::Tensor* d_default) {
  const T* g = grad.flat<T>().data();
  const int64_t* p = picked.data<int64_t>();
  const int64_t n = picked.NumElements();
  T* d = d_values->flat<T>().data();
  std::vector<uint8_t> used(static_cast<size_t>(grad.NumElements()), 0);
  for (int64_t i = 0; i < n; ++i) {
    d[i] = g[p[i]];
    used[p[i]] = 1;
  }
  T sum(0);
  for (int64_t j = 0; j < grad.NumElements(); ++j) {
    if (!used[j]) sum += g[j];
  }
  d_default->scalar<T>()() = sum;
}

class FillEmptyRowsGradKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseFillEmptyRowsGrad";
      const tfw::Tensor& map = ctx->input(0);
      const tfw::Tensor& grad = ctx->input(1);
      TK_CHECK(map.dims() == 1, kInvalidArgument, op,
               ": reverse_index_map must be a vector, got shape ", ShapeText(map));
      TK_CHECK(grad.dims() == 1, kInvalidArgument, op, ": grad_values must be a vector, got shape ",
               ShapeText(grad));
      const int64_t n = map.dim_size(0);
      const std::optional<DType> sum = SumDType(grad.dtype());
      if (!sum) {  // complex: the positions through the library (which checks them), sums here
        const FillEmptyRowsGradResult r =
            FillEmptyRowsGrad(Wrap(map, DType::kInt64), Positions(grad.dim_size(0)));
        tfw::Tensor* d_values = AllocateTf(ctx, 0, {n});
        tfw::Tensor* d_default = AllocateTf(ctx, 1, {});
        if (grad.dtype() == tfw::DT_COMPLEX64) {
          ComplexGrad<tfw::complex64>(grad, r.d_values, d_values, d_default);
        } else {
          ComplexGrad<tfw::complex128>(grad, r.d_values, d_values, d_default);
        }
        return;
      }
      const FillEmptyRowsGradResult r =
          FillEmptyRowsGrad(Wrap(map, DType::kInt64), Wrap(grad, *sum));
      Tensor d_values = AllocateOutput(ctx, 0, {n}, *sum);
      Copy(r.d_values, &d_values);
      Tensor d_default = AllocateOutput(ctx, 1, {}, *sum);
      Copy(r.d_default_value, &d_default);
    });
  }
};

#define TENSORKIT_REGISTER(T)                                   \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseFillEmptyRows")  \
                              .Device(::tensorflow::DEVICE_CPU) \
                              .TypeConstraint<T>("T"),          \
                          FillEmptyRowsKernel);
// TensorFlow's CPU kernel's dtypes: every one, resource and variant handles included.
TF_CALL_ALL_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER
#define TENSORKIT_REGISTER(T)                                      \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseFillEmptyRowsGrad") \
                              .Device(::tensorflow::DEVICE_CPU)    \
                              .TypeConstraint<T>("T"),             \
                          FillEmptyRowsGradKernel);
// TensorFlow's CPU kernel's dtypes: the numbers.
TF_CALL_NUMBER_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
