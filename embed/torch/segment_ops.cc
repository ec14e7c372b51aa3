// The features library's segment reductions, empty-row filling and bucketizing as torch
// operators (FBGEMM has none of them in this form; TensorFlow's semantics, as the library's):
//   segment_reduce(data, segment_ids, num_segments, reduce, sorted)  SegmentReduce, or
//       UnsortedSegmentReduce for sorted=False; segment_reduce_backward its gradient for sum,
//       mean and sqrtn (SparseSegmentReduceGrad over the identity indices).
//   fill_empty_rows(indices, values, dense_shape, default_value)  tf.raw_ops.SparseFillEmptyRows:
//       (output_indices, output_values, empty_row_indicator, reverse_index_map);
//       fill_empty_rows_grad its gradient (SparseFillEmptyRowsGrad).
//   bucketize(values, boundaries, offsets)  Bucketize of a jagged tensor's values (offsets
//       checked and kept): torch.bucketize(values, boundaries, right=True, out_int32=True).
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tensorkit/embed/torch/torch_glue.h"
#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/segment.h"

namespace tensorkit::torch_ops {
namespace {

TorchTensor SegmentReduceOp(TorchTensor data, TorchTensor segment_ids, int64_t num_segments,
                            std::string reduce, bool sorted) {
  const char* op = "tensorkit::segment_reduce";
  return Run(op, [&] {
    const TorchStream stream(data, op);
    const Combiner c = ParseCombiner(reduce, op);
    const Tensor d = WrapAny(data, op, "data"), ids = WrapAny(segment_ids, op, "segment_ids");
    return Export(sorted ? SegmentReduce(d, ids, num_segments, c)
                         : UnsortedSegmentReduce(d, ids, num_segments, c));
  });
}

TorchTensor SegmentReduceBackwardOp(TorchTensor grad, TorchTensor segment_ids, int64_t num_rows,
                                    std::string reduce) {
  const char* op = "tensorkit::segment_reduce_backward";
  return Run(op, [&] {
    const Combiner c = ParseCombiner(reduce, op);
    TK_CHECK(c != Combiner::kMax && c != Combiner::kMin, kUnsupported, op, ": the gradient of \"",
             reduce, "\" is taken by tensorkit.torch, not here");
    const Tensor ids = IndexVector(segment_ids, op, "segment_ids");
    TK_CHECK(ids.Dim(0) == num_rows, kShapeMismatch, op, ": segment_ids has ", ids.Dim(0),
             " elements but num_rows = ", num_rows);
    // Row k of data fed segment ids[k]; rows with a negative id (dropped by the unsorted
    // reduction) get no gradient, so they are left out of the index lists.
    const int64_t* s = ids.data<int64_t>();
    std::vector<int64_t> rows, segs;
    rows.reserve(static_cast<size_t>(num_rows));
    segs.reserve(static_cast<size_t>(num_rows));
    for (int64_t k = 0; k < num_rows; ++k) {
      if (s[k] < 0) continue;
      rows.push_back(k);
      segs.push_back(s[k]);
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    return Export(SparseSegmentReduceGrad(Wrap(grad, op, "grad"),
                                          Tensor::FromVector(std::move(rows), {n}),
                                          Tensor::FromVector(std::move(segs), {n}), num_rows, c));
  });
}

std::tuple<TorchTensor, TorchTensor, TorchTensor, TorchTensor> FillEmptyRowsOp(
    TorchTensor indices, TorchTensor values, std::vector<int64_t> dense_shape,
    TorchTensor default_value) {
  const char* op = "tensorkit::fill_empty_rows";
  return Run(op, [&] {
    const TorchStream stream(values, op);
    TK_CHECK(indices.dim() == 2 && indices.scalar_type() == ScalarType::Long, kInvalidArgument, op,
             ": indices must be torch.int64 [nnz, rank], got ",
             ScalarTypeName(indices.scalar_type()), " ", SizesText(indices));
    TK_CHECK(values.dim() == 1 && values.size(0) == indices.size(0), kShapeMismatch, op,
             ": values must be [nnz] with nnz = ", indices.size(0), ", got shape ",
             SizesText(values));
    TK_CHECK(static_cast<int64_t>(dense_shape.size()) == indices.size(1), kShapeMismatch, op,
             ": dense_shape has ", dense_shape.size(), " dims but indices has rank ",
             indices.size(1));
    TK_CHECK(default_value.numel() == 1 && default_value.scalar_type() == values.scalar_type(),
             kInvalidArgument, op, ": default_value must be one element of values' dtype ",
             ScalarTypeName(values.scalar_type()), ", got ",
             ScalarTypeName(default_value.scalar_type()), " ", SizesText(default_value));
    const Tensor dv = WrapAny(default_value, op, "default_value").HostContiguous();
    Scalar fill;
    Dispatch<kNumericDTypes>(dv.dtype(), op, [&]<typename T>() {
      fill = Scalar(*static_cast<const T*>(dv.raw_data()));
    });
    const SparseTensor st = SparseTensor::Create(WrapAny(indices, op, "indices"),
                                                 WrapAny(values, op, "values"), dense_shape);
    const FillEmptyRowsResult r = FillEmptyRows(st, fill);
    return std::make_tuple(Export(r.output.indices()), Export(r.output.values()),
                           Export(r.empty_row_indicator), Export(r.reverse_index_map));
  });
}

std::tuple<TorchTensor, TorchTensor> FillEmptyRowsGradOp(TorchTensor reverse_index_map,
                                                         TorchTensor grad_values) {
  const char* op = "tensorkit::fill_empty_rows_grad";
  return Run(op, [&] {
    const TorchStream stream(grad_values, op);
    const Tensor grad = WrapAny(grad_values, op, "grad_values");
    const FillEmptyRowsGradResult r = FillEmptyRowsGrad(
        OnDevice(IndexVector(reverse_index_map, op, "reverse_index_map"), grad.device()), grad);
    return std::make_tuple(Export(r.d_values), Export(r.d_default_value));
  });
}

TorchTensor BucketizeOp(TorchTensor values, TorchTensor boundaries,
                        std::optional<TorchTensor> offsets) {
  const char* op = "tensorkit::bucketize";
  return Run(op, [&] {
    const TorchStream stream(values, op);
    TK_CHECK(boundaries.dim() == 1, kInvalidArgument, op, ": boundaries must be 1-D, got shape ",
             SizesText(boundaries));
    const Tensor vals = WrapAny(values, op, "values");
    const Tensor bc = WrapAny(boundaries, op, "boundaries").HostContiguous();
    const int64_t n = bc.Dim(0);
    // float32 boundaries compare as float (TensorFlow's and torch's promotion for int and float32
    // values); any other dtype as double.
    std::vector<float> bf;
    std::vector<double> bd;
    const bool as_float = bc.dtype() == DType::kFloat32;
    Dispatch<kNumericDTypes>(bc.dtype(), op, [&]<typename T>() {
      const T* p = bc.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if (as_float) {
          bf.push_back(static_cast<float>(p[i]));
        } else {
          bd.push_back(static_cast<double>(p[i]));
        }
      }
    });
    if (!offsets) return Export(as_float ? Bucketize(vals, bf) : Bucketize(vals, bd));
    TK_CHECK(values.dim() >= 1, kInvalidArgument, op,
             ": values of a jagged tensor must be at least 1-D, got shape ", SizesText(values));
    const JaggedTensor jt = JaggedTensor::FromOffsets(
        vals, OnDevice(IndexVector(*offsets, op, "offsets"), vals.device()));
    return Export((as_float ? Bucketize(jt, bf) : Bucketize(jt, bd)).values());
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("segment_reduce", TORCH_BOX(&SegmentReduceOp));
  m.impl("segment_reduce_backward", TORCH_BOX(&SegmentReduceBackwardOp));
  m.impl("fill_empty_rows", TORCH_BOX(&FillEmptyRowsOp));
  m.impl("fill_empty_rows_grad", TORCH_BOX(&FillEmptyRowsGradOp));
  m.impl("bucketize", TORCH_BOX(&BucketizeOp));
}

// The same kernels on CUDA tensors: the features library's device bodies, on torch's stream.
// segment_reduce_backward has no device path (the library's gradient runs on the CPU).
STABLE_TORCH_LIBRARY_IMPL(tensorkit, CUDA, m) {
  m.impl("segment_reduce", TORCH_BOX(&SegmentReduceOp));
  m.impl("fill_empty_rows", TORCH_BOX(&FillEmptyRowsOp));
  m.impl("fill_empty_rows_grad", TORCH_BOX(&FillEmptyRowsGradOp));
  m.impl("bucketize", TORCH_BOX(&BucketizeOp));
}

}  // namespace tensorkit::torch_ops
