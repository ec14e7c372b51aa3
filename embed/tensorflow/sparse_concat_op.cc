// TensorkitSparseConcat: tf.raw_ops.SparseConcat as one concatenation and one radix sort.
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/embed/tensorflow/tf_outputs.h"
#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;

REGISTER_OP("TensorkitSparseConcat")
    .Input("indices: N * int64")
    .Input("values: N * T")
    .Input("shapes: N * int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("concat_dim: int")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, InferenceContext::kUnknownDim));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(2, c->Vector(InferenceContext::kUnknownDim));
      return absl::OkStatus();
    });

// out[i] = element perm[i] of the inputs' values taken one after another (dtypes without a bit
// dtype).
template <typename T>
void GatherFromInputs(const tfw::OpInputList& vals, const Tensor& perm, tfw::Tensor* out) {
  std::vector<const T*> src;
  src.reserve(static_cast<size_t>(perm.NumElements()));
  for (const tfw::Tensor& v : vals) {
    const T* p = v.flat<T>().data();
    for (int64_t i = 0; i < v.NumElements(); ++i) src.push_back(p + i);
  }
  const int64_t* q = perm.data<int64_t>();
  T* dst = out->flat<T>().data();
  ParallelFor(0, perm.NumElements(), GrainFor(sizeof(T) + 16), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = *src[q[i]];
  });
}

class SparseConcatKernel : public tfw::OpKernel {
 public:
  explicit SparseConcatKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("concat_dim", &concat_dim_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseConcat";
      tfw::OpInputList inds, vals, shapes;
      auto input_list = [&](const char* name, tfw::OpInputList* list) {
        absl::Status s = ctx->input_list(name, list);
        if (!s.ok()) throw StatusError(s);
      };
      input_list("indices", &inds);
      input_list("values", &vals);
      input_list("shapes", &shapes);
      const std::optional<DType> bit = BitDType(vals[0].dtype());
      std::vector<SparseTensor> inputs;
      int64_t total = 0;
      for (int i = 0; i < inds.size(); ++i) {
        TK_CHECK(inds[i].dims() == 2, kInvalidArgument, op, ": indices[", i,
                 "] must be a matrix [nnz, rank], got shape ", ShapeText(inds[i]));
        TK_CHECK(vals[i].dims() == 1, kInvalidArgument, op, ": values[", i,
                 "] must be a vector [nnz], got shape ", ShapeText(vals[i]));
        const std::vector<int64_t> shape = ShapeVector(shapes[i], op, "shapes[i]");
        const int64_t nnz = inds[i].dim_size(0);
        TK_CHECK(
            inds[i].dim_size(1) == static_cast<int64_t>(shape.size()) && vals[i].dim_size(0) == nnz,
            kInvalidArgument, op, ": input ", i, " has indices ", ShapeText(inds[i]), ", values ",
            ShapeText(vals[i]), " and a shape of ", shape.size(), " dims; they need [nnz, ",
            shape.size(), "], [nnz]");
        inputs.push_back(SparseTensor::Create(Wrap(inds[i], DType::kInt64),
                                              bit ? Wrap(vals[i], *bit) : Positions(nnz, total),
                                              shape));
        // Per input: an index past its own dim on the axis would land inside the next input.
        CheckIndexBounds(inputs.back(),
                         ("TensorkitSparseConcat input " + std::to_string(i)).c_str());
        total += nnz;
      }
      // Checks ranks, dims off the axis and the axis itself.
      const SparseTensor joined = SparseTensor::Concat(inputs, concat_dim_);
      const int rank = joined.rank();
      // Each input's volume fits (ShapeVector), the joined one may not (TensorFlow refuses it).
      CheckVolumeFits(joined.shape(), op, "the concatenated shape",
                      "; concatenate fewer or smaller inputs");
      TfOutputs out(ctx, {0, bit ? 1 : -1});
      ReorderInto(joined, StdOrder(rank), out, op);
      if (!bit) {
        tfw::Tensor* values_out = AllocateTf(ctx, 1, {total});
        const Tensor perm = out.Scratch(1);
        DispatchByPosition(vals[0].dtype(), op,
                           [&]<typename T>() { GatherFromInputs<T>(vals, perm, values_out); });
      }
      Tensor out_shape = AllocateOutput(ctx, 2, {rank}, DType::kInt64);
      for (int a = 0; a < rank; ++a) out_shape.data<int64_t>()[a] = joined.shape()[a];
    });
  }

 private:
  int concat_dim_ = 0;
};

#define TENSORKIT_REGISTER(T)                                                                \
  REGISTER_KERNEL_BUILDER(                                                                   \
      Name("TensorkitSparseConcat").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      SparseConcatKernel);
// TensorFlow's CPU kernel's dtypes: every one, resource and variant handles included.
TF_CALL_ALL_TYPES(TENSORKIT_REGISTER)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
