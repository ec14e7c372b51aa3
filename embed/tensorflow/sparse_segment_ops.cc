// TensorkitSparseSegmentSum / Mean / SqrtN and their WithNumSegments forms:
// tf.raw_ops.SparseSegment* on tensorkit's SparseSegmentReduce (one task per output row, in
// entry order, parallel over the segments).
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/features/segment.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

// TensorFlow's shape function of these ops: data [N, ...], indices [K], segment_ids [K];
// output [num_segments or unknown, data.shape[1:]].
absl::Status SegmentShape(InferenceContext* c, bool with_num_segments) {
  ShapeHandle data, indices, ids, tail, out;
  TF_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &data));
  TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &indices));
  TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &ids));
  TF_RETURN_IF_ERROR(c->Merge(indices, ids, &indices));
  TF_RETURN_IF_ERROR(c->Subshape(data, 1, &tail));
  DimensionHandle rows = c->UnknownDim();
  if (with_num_segments) {
    ShapeHandle num;
    TF_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &num));
    TF_RETURN_IF_ERROR(c->MakeDimForScalarInput(3, &rows));
  }
  TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(rows), tail, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

// Note [index attrs default to int64]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// TensorFlow declares Tidx, Tsegmentids and Tnumsegments with the default int32. Its Python eager
// fast path (TFE_Py_FastPathExecute, taken from the second call of a process on, and on the first
// when some input is a tensor) converts a NumPy array or a Python scalar given for such an input,
// when no tensor fixes the attr, to the attr's default dtype with an unchecked cast: int64
// indices [0, 2^32 + 1, 1] became int32 [0, 1, 1] and read row 1, and 2^32 + 100000 was refused
// as 100000 (tf.raw_ops.SparseSegmentSum does the same). The kernel only ever sees the cut
// values, so no check there can catch it. With int64 defaults that cast can only widen (int8 to
// int32 arrays, uint32) or turn uint64 values past 2^63 negative, which the index checks refuse.
// Tensors and Python lists keep their own dtype as before.
#define TENSORKIT_SEGMENT_OP(Name, Types, WithNum, Inputs)          \
  REGISTER_OP(Name)                                                 \
      .Input("data: T")                                             \
      .Input("indices: Tidx")                                       \
      .Input("segment_ids: Tsegmentids") Inputs.Output("output: T") \
      .Attr("T: " Types)                                            \
      .Attr("Tidx: {int32, int64} = DT_INT64")                      \
      .Attr("Tsegmentids: {int32, int64} = DT_INT64")               \
      .Attr("sparse_gradient: bool = false")                        \
      .SetShapeFn([](InferenceContext* c) { return SegmentShape(c, WithNum); })
#define TENSORKIT_NUM_SEGMENTS \
  .Input("num_segments: Tnumsegments").Attr("Tnumsegments: {int32, int64} = DT_INT64")

// TensorFlow's attribute lists: real numbers for the sum, floats for mean and sqrtn.
#define TENSORKIT_SUM_TYPES \
  "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
#define TENSORKIT_FLOAT_TYPES "{bfloat16, half, float, double}"

TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentSum", TENSORKIT_SUM_TYPES, false, );
TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentMean", TENSORKIT_FLOAT_TYPES, false, );
TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentSqrtN", TENSORKIT_FLOAT_TYPES, false, );
TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentSumWithNumSegments", TENSORKIT_SUM_TYPES, true,
                     TENSORKIT_NUM_SEGMENTS);
TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentMeanWithNumSegments", TENSORKIT_FLOAT_TYPES, true,
                     TENSORKIT_NUM_SEGMENTS);
TENSORKIT_SEGMENT_OP("TensorkitSparseSegmentSqrtNWithNumSegments", TENSORKIT_FLOAT_TYPES, true,
                     TENSORKIT_NUM_SEGMENTS);

// An int32 or int64 TensorFlow vector as a tensorkit tensor of its own dtype (no copy).
Tensor WrapIds(const tfw::Tensor& t) {
  return Wrap(t, t.dtype() == tfw::DT_INT32 ? DType::kInt32 : DType::kInt64);
}

class SparseSegmentKernel : public tfw::OpKernel {
 public:
  SparseSegmentKernel(tfw::OpKernelConstruction* ctx, Combiner combiner, bool with_num_segments)
      : OpKernel(ctx), combiner_(combiner), with_num_segments_(with_num_segments) {}

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const std::string name = type_string();
      const char* op = name.c_str();
      const tfw::Tensor& data = ctx->input(0);
      const tfw::Tensor& indices = ctx->input(1);
      const tfw::Tensor& ids = ctx->input(2);
      TK_CHECK(data.dims() >= 1, kInvalidArgument, op,
               ": data must have at least one axis, got shape ", ShapeText(data));
      TK_CHECK(indices.dims() == 1 && ids.dims() == 1 && indices.dim_size(0) == ids.dim_size(0),
               kInvalidArgument, op, ": indices ", ShapeText(indices), " and segment_ids ",
               ShapeText(ids), " must be vectors of the same size");
      int64_t num_segments = -1;  // without the input: the last segment id + 1
      if (with_num_segments_) {
        const tfw::Tensor& num = ctx->input(3);
        TK_CHECK(num.dims() == 0, kInvalidArgument, op,
                 ": num_segments must be a scalar, got shape ", ShapeText(num));
        num_segments = IntVector(num, op, "num_segments", /*allow_scalar=*/true)[0];
        TK_CHECK(num_segments >= 0, kInvalidArgument, op, ": num_segments is ", num_segments,
                 "; it must be >= 0");
      }
      // Sums of 8- and 16-bit integers run in int32 and wrap back when they are stored, which
      // gives the bits of a sum kept in the narrow type.
      const DType moved = *BitDType(data.dtype());
      const bool widen = moved == DType::kInt8 || moved == DType::kUInt8 || moved == DType::kInt16;
      Tensor in = Wrap(data, moved);
      if (widen) in = Converted(in, DType::kInt32);
      const Tensor result =
          SparseSegmentReduce(in, WrapIds(indices), WrapIds(ids), num_segments, combiner_);
      Tensor out = AllocateOutput(ctx, 0, result.Dims(), moved);
      Copy(result, &out);
    });
  }

 private:
  Combiner combiner_;
  bool with_num_segments_;
};

template <Combiner kCombiner, bool kWithNumSegments>
class SegmentKernelOf : public SparseSegmentKernel {
 public:
  explicit SegmentKernelOf(tfw::OpKernelConstruction* ctx)
      : SparseSegmentKernel(ctx, kCombiner, kWithNumSegments) {}
};

using SumKernel = SegmentKernelOf<Combiner::kSum, false>;
using SumNumKernel = SegmentKernelOf<Combiner::kSum, true>;
using MeanKernel = SegmentKernelOf<Combiner::kMean, false>;
using MeanNumKernel = SegmentKernelOf<Combiner::kMean, true>;
using SqrtNKernel = SegmentKernelOf<Combiner::kSqrtN, false>;
using SqrtNNumKernel = SegmentKernelOf<Combiner::kSqrtN, true>;

// One kernel per (T, Tidx, Tsegmentids), as TensorFlow registers them.
#define TENSORKIT_REGISTER_IDS(op, T, Kernel, Tidx, Tseg)           \
  REGISTER_KERNEL_BUILDER(Name(op)                                  \
                              .Device(::tensorflow::DEVICE_CPU)     \
                              .TypeConstraint<T>("T")               \
                              .TypeConstraint<Tidx>("Tidx")         \
                              .TypeConstraint<Tseg>("Tsegmentids"), \
                          Kernel);
#define TENSORKIT_REGISTER_ONE(op, T, Kernel)             \
  TENSORKIT_REGISTER_IDS(op, T, Kernel, int32_t, int32_t) \
  TENSORKIT_REGISTER_IDS(op, T, Kernel, int32_t, int64_t) \
  TENSORKIT_REGISTER_IDS(op, T, Kernel, int64_t, int32_t) \
  TENSORKIT_REGISTER_IDS(op, T, Kernel, int64_t, int64_t)
#define TENSORKIT_REGISTER_SUM(T)                                   \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentSum", T, SumKernel) \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentSumWithNumSegments", T, SumNumKernel)
#define TENSORKIT_REGISTER_FLOAT(T)                                                     \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentMean", T, MeanKernel)                   \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentMeanWithNumSegments", T, MeanNumKernel) \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentSqrtN", T, SqrtNKernel)                 \
  TENSORKIT_REGISTER_ONE("TensorkitSparseSegmentSqrtNWithNumSegments", T, SqrtNNumKernel)
// TensorFlow's CPU kernels' dtypes.
TF_CALL_REAL_NUMBER_TYPES(TENSORKIT_REGISTER_SUM)
TF_CALL_FLOAT_TYPES(TENSORKIT_REGISTER_FLOAT)
#undef TENSORKIT_REGISTER_SUM
#undef TENSORKIT_REGISTER_FLOAT
#undef TENSORKIT_REGISTER_ONE
#undef TENSORKIT_REGISTER_IDS

}  // namespace
}  // namespace tensorkit::tf
