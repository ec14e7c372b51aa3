// TensorkitSparseToDense: tf.raw_ops.SparseToDense on tensorkit's checked scatter.
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TensorkitSparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle out;
      TF_RETURN_IF_ERROR(c->MakeShapeFromShapeTensor(1, &out));
      c->set_output(0, out);
      return absl::OkStatus();
    });

// Fills `dense` (a dtype without a bit dtype) from its default value and the values at the
// positions that a scatter of entry numbers left in `where` (-1: no entry).
template <typename T>
void FillByPosition(const tfw::Tensor& values, const tfw::Tensor& default_value,
                    const Tensor& where, tfw::Tensor* dense) {
  const T* v = values.flat<T>().data();
  const bool scalar = values.dims() == 0;
  const T fill = default_value.scalar<T>()();
  const int64_t* w = where.data<int64_t>();
  T* out = dense->flat<T>().data();
  ParallelFor(0, where.NumElements(), GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = w[i] < 0 ? fill : v[scalar ? 0 : w[i]];
  });
}

class SparseToDenseKernel : public tfw::OpKernel {
 public:
  explicit SparseToDenseKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_indices_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseToDense";
      const tfw::Tensor& ind = ctx->input(0);
      const tfw::Tensor& vals = ctx->input(2);
      const tfw::Tensor& def = ctx->input(3);
      TK_CHECK(ind.dims() <= 2, kInvalidArgument, op,
               ": sparse_indices must be a scalar, a vector or a matrix, got shape ",
               ShapeText(ind));
      // A scalar is one index of a 1-D output; a vector [n] is n indices of a 1-D output.
      const int64_t n = ind.dims() > 0 ? ind.dim_size(0) : 1;
      const int64_t rank = ind.dims() > 1 ? ind.dim_size(1) : 1;
      const std::vector<int64_t> shape = ShapeVector(ctx->input(1), op, "output_shape");
      TK_CHECK(static_cast<int64_t>(shape.size()) == rank, kInvalidArgument, op, ": output_shape ",
               ShapeString(shape), " has ", shape.size(), " dims but sparse_indices ",
               ShapeText(ind), " index ", rank);
      TK_CHECK(vals.dims() == 0 || (vals.dims() == 1 && vals.dim_size(0) == n), kInvalidArgument,
               op, ": sparse_values must be a scalar or a vector [", n, "], got shape ",
               ShapeText(vals));
      TK_CHECK(def.dims() == 0, kInvalidArgument, op,
               ": default_value must be a scalar, got shape ", ShapeText(def));
      const std::optional<DType> bit = BitDType(vals.dtype());
      Tensor values;
      if (!bit) {
        values = Positions(n);
      } else if (vals.dims() == 0) {
        values = Tensor::Empty({n}, *bit);  // one copy per entry, as TensorFlow makes
        Copy(Wrap(vals, *bit), &values);
      } else {
        values = Wrap(vals, *bit);
      }
      SparseTensor st = SparseTensor::Create(IndicesAsInt64(ind, n, rank), values, shape,
                                             StdOrder(static_cast<int>(rank)));
      // Sorted, no repeats, in bounds: checked by FillDense as it writes, or here before the
      // leading axes of a shape past kMaxAxes dims merge into one (the output buffer is the
      // same).
      bool validate = validate_indices_;
      std::vector<int64_t> dims = shape;
      if (rank > kMaxAxes) {
        if (validate) st.ValidateIndices();
        validate = false;
        CheckIndexBounds(st, op);  // before merging, which could hide a bad coordinate
        std::vector<std::vector<int>> groups(1);
        for (int a = 0; a < rank; ++a) {
          if (a > rank - kMaxAxes) groups.emplace_back();
          groups.back().push_back(a);
        }
        st = FoldAxes(st, groups);
        dims = st.shape();
      }
      if (bit) {
        Tensor dense = Wrap(*AllocateTf(ctx, 0, shape), *bit, dims);
        st.FillDense(&dense, Wrap(def, *bit), validate);  // never writes out of bounds
        return;
      }
      Tensor where = Tensor::Empty(dims, DType::kInt64);
      Tensor none = Tensor::Empty({}, DType::kInt64);
      Set(-1, &none);
      st.FillDense(&where, none, validate);
      tfw::Tensor* dense = AllocateTf(ctx, 0, shape);
      DispatchByPosition(vals.dtype(), op,
                         [&]<typename T>() { FillByPosition<T>(vals, def, where, dense); });
    });
  }

 private:
  bool validate_indices_ = true;
};

#define TENSORKIT_REGISTER(T)                                       \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseToDense")            \
                              .Device(::tensorflow::DEVICE_CPU)     \
                              .TypeConstraint<T>("T")               \
                              .TypeConstraint<int32_t>("Tindices"), \
                          SparseToDenseKernel);                     \
  REGISTER_KERNEL_BUILDER(Name("TensorkitSparseToDense")            \
                              .Device(::tensorflow::DEVICE_CPU)     \
                              .TypeConstraint<T>("T")               \
                              .TypeConstraint<int64_t>("Tindices"), \
                          SparseToDenseKernel);
// TensorFlow's CPU kernel's dtypes: numbers, bool, string and the 8- and 16-bit quantized ones.
TF_CALL_POD_STRING_TYPES(TENSORKIT_REGISTER)
TF_CALL_qint8(TENSORKIT_REGISTER) TF_CALL_quint8(TENSORKIT_REGISTER)
    TF_CALL_qint16(TENSORKIT_REGISTER) TF_CALL_quint16(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
