// Checks shared by the features/ sources.
#include "tensorkit/features/features_internal.h"

#include "tensorkit/dense/ops.h"
#include "tensorkit/features/combiner.h"

namespace tensorkit {

const char* CombinerName(Combiner c) {
  switch (c) {
    case Combiner::kSum:
      return "sum";
    case Combiner::kMean:
      return "mean";
    case Combiner::kSqrtN:
      return "sqrtn";
    case Combiner::kMax:
      return "max";
    case Combiner::kMin:
      return "min";
  }
  return "unknown";
}

}  // namespace tensorkit

namespace tensorkit::features_internal {

void CheckJaggedValues(const Tensor& values, const char* op) {
  TK_CHECK(values.defined(), kInvalidArgument, op, ": values is an undefined tensor");
  TK_CHECK(values.NumAxes() >= 1, kShapeMismatch, op,
           ": values must have at least one axis (the items of every row along axis 0), got a "
           "rank-0 tensor; Unsqueeze(values, 0) makes it [1]");
}

Tensor HostOffsets(const Tensor& offsets) { return offsets.HostContiguous(); }

void CheckOffsets(const int64_t* off, int64_t n, int64_t num_values, const char* op) {
  TK_CHECK(off[0] == 0, kInvalidArgument, op, ": offsets[0] is ", off[0],
           "; the offsets of a jagged tensor start at 0");
  const int64_t bad = FirstWhere(n - 1, [&](int64_t i) { return off[i + 1] < off[i]; });
  TK_CHECK(bad < 0, kInvalidArgument, op, ": offsets[", bad + 1, "] = ", off[bad + 1],
           " is less than offsets[", bad, "] = ", off[bad], "; offsets must be non-decreasing");
  TK_CHECK(off[n - 1] == num_values, kShapeMismatch, op, ": the last offset (offsets[", n - 1,
           "] = ", off[n - 1], ") must equal the number of values, ", num_values);
}

void CheckLengthsDType(const Tensor& lengths, const char* op) {
  TK_CHECK(lengths.dtype() == DType::kInt32 || lengths.dtype() == DType::kInt64, kDTypeMismatch, op,
           ": lengths must be int32 or int64, got ", DTypeName(lengths.dtype()));
}

Tensor OffsetsFromLengths(const Tensor& lengths, int64_t num_values, const char* op) {
  CheckLengthsDType(lengths, op);
  const Tensor host = Converted(lengths, DType::kInt64).HostContiguous();
  const int64_t b = host.NumElements();
  const int64_t* len = host.data<int64_t>();
  const int64_t bad = FirstWhere(b, [&](int64_t i) { return len[i] < 0; });
  TK_CHECK(bad < 0, kInvalidArgument, op, ": lengths[", bad, "] = ", len[bad],
           " is negative; every length must be >= 0");
  Tensor offsets = Tensor::Empty({b + 1}, DType::kInt64);
  int64_t* off = offsets.data<int64_t>();
  off[0] = 0;
  for (int64_t i = 0; i < b; ++i) {
    // Lengths are >= 0, so the running sum only overflows past INT64_MAX; stop at the first
    // length that takes it past the number of values instead.
    TK_CHECK(len[i] <= num_values - off[i], kShapeMismatch, op,
             ": the lengths add up to more than ", num_values,
             " (the number of values) at lengths[", i, "]");
    off[i + 1] = off[i] + len[i];
  }
  TK_CHECK(off[b] == num_values, kShapeMismatch, op, ": the lengths add up to ", off[b],
           " but values has ", num_values, " items; they must be equal");
  return offsets;
}

void CheckWeights(const Tensor& weights, int64_t n, const Tensor& values, const char* op) {
  TK_CHECK(IsFloat(weights.dtype()), kDTypeMismatch, op, ": weights must be a float tensor, got ",
           DTypeName(weights.dtype()));
  TK_CHECK(weights.NumAxes() == 1 && weights.Dim(0) == n, kShapeMismatch, op, ": weights must be [",
           n, "] (one per value), got ", ShapeString(weights.Dims()));
  CheckSameDevice(values.device(), weights.device(), op, "values", "weights");
}

void CheckOnCpu(const Tensor& t, const char* what, const char* op) {
  TK_CHECK(!t.defined() || t.device().is_cpu(), kUnsupported, op, ": ", what, " is on ", t.device(),
           "; ", op, " runs on the CPU in this version; move the inputs with To(Device::Cpu())");
}

}  // namespace tensorkit::features_internal
