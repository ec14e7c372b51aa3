// TensorkitBucketize: tf.raw_ops.Bucketize on tensorkit's Bucketize (a branch-free fixed-step
// search, parallel over fixed chunks), written straight into TensorFlow's output buffer.
#include <vector>

#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/features/bucketize.h"

namespace tensorkit::tf {
namespace {

REGISTER_OP("TensorkitBucketize")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: {int32, int64, float, double}")
    .Attr("boundaries: list(float)")
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

template <typename T>
class BucketizeKernel : public tfw::OpKernel {
 public:
  explicit BucketizeKernel(tfw::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("boundaries", &boundaries_));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const tfw::Tensor& in = ctx->input(0);
      // Any rank (TensorFlow allows more axes than a tensorkit Tensor): one flat vector.
      const int64_t n = in.NumElements();
      const Tensor values = Wrap(in, DTypeOf<T>, std::vector<int64_t>{n});
      tfw::Tensor* out = nullptr;
      const absl::Status s = ctx->allocate_output(0, in.shape(), &out);
      if (!s.ok()) throw StatusError(s);
      Tensor ids = Wrap(*out, DType::kInt32, std::vector<int64_t>{n});
      Bucketize(values, boundaries_, &ids);
    });
  }

 private:
  std::vector<float> boundaries_;
};

#define TENSORKIT_REGISTER(T)                                                             \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("TensorkitBucketize").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      BucketizeKernel<T>);
// TensorFlow's CPU kernel's dtypes.
TENSORKIT_REGISTER(int32_t)
TENSORKIT_REGISTER(int64_t)
TENSORKIT_REGISTER(float)
TENSORKIT_REGISTER(double)
#undef TENSORKIT_REGISTER

}  // namespace
}  // namespace tensorkit::tf
