// TensorkitReadSparse: a tensor file (.npz, scipy.sparse .npz, .mtx, .tns, .npy) read by
// tensorkit's io into a TensorFlow SparseTensor's three tensors. Besides being useful, it is the
// op that makes zlib (.npz members are deflated) part of the library.
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/io/io.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;

REGISTER_OP("TensorkitReadSparse")
    .Input("path: string")
    .Output("indices: int64")
    .Output("values: dtype")
    .Output("dense_shape: int64")
    .Attr("dtype: {bool, int8, uint8, int16, int32, int64, half, bfloat16, float, double}")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, InferenceContext::kUnknownDim));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      c->set_output(2, c->Vector(InferenceContext::kUnknownDim));
      return absl::OkStatus();
    });

class ReadSparseKernel : public tfw::OpKernel {
 public:
  explicit ReadSparseKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const tfw::Tensor& path = ctx->input(0);
      TK_CHECK(path.dims() == 0, kInvalidArgument,
               "TensorkitReadSparse: path must be a scalar string, got shape ", ShapeText(path));
      io::TensorData data = io::Read(std::string(path.scalar<tfw::tstring>()()));
      const SparseTensor st = data.is_sparse() ? data.sparse : SparseTensor::FromDense(data.dense);
      const int64_t nnz = st.nnz();
      const int rank = st.rank();
      // The file's arrays live in tensorkit's memory: one copy into each output.
      Tensor indices = AllocateOutput(ctx, 0, {nnz, rank}, DType::kInt64);
      Copy(st.indices(), &indices);
      Tensor values = AllocateOutput(ctx, 1, {nnz}, *BitDType(dtype_));
      Copy(st.values(), &values);  // converts to the requested dtype
      Tensor shape = AllocateOutput(ctx, 2, {rank}, DType::kInt64);
      for (int a = 0; a < rank; ++a) shape.data<int64_t>()[a] = st.shape()[a];
    });
  }

 private:
  tfw::DataType dtype_ = tfw::DT_FLOAT;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitReadSparse").Device(::tensorflow::DEVICE_CPU),
                        ReadSparseKernel);

}  // namespace
}  // namespace tensorkit::tf
