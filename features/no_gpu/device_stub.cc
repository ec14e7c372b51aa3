// Linked when tensorkit is built without CUDA. Never reached (a CUDA tensor cannot be allocated
// in such a build), but a clear Error beats a crash if it were.
#include "tensorkit/common/error.h"
#include "tensorkit/features/device_ops.h"

namespace tensorkit::features_cuda {

Tensor IntegerHashBuckets(const Tensor& values, uint64_t, bool, const std::array<uint64_t, 2>&,
                          const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

Tensor IntegerLookup(const Tensor& values, const Tensor&, const Tensor&,
                     const features_internal::IntegerIdRule&, int64_t*, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

Tensor BucketizeOnDevice(const Tensor& values, const std::vector<float>&, int32_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}
Tensor BucketizeOnDevice(const Tensor& values, const std::vector<double>&, int32_t,
                         const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

CountKeys CountKeysOnDevice(const Tensor& ids, const Tensor&, const Tensor&, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", ids.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

std::vector<int64_t> FirstIdsOutOfRange(const Tensor& ids, const std::vector<int64_t>&,
                                        const std::vector<int64_t>&, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", ids.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void EmbeddingBagOnDevice(const Tensor& table, const Tensor&, const Tensor&, const Tensor&, int64_t,
                          int64_t, int64_t, Combiner, Tensor*, int64_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", table.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

SegmentVerdict CheckSortedSegmentsOnDevice(const Tensor&, const Tensor& segment_ids, int64_t,
                                           int64_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", segment_ids.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

UnsortedVerdict CheckUnsortedIdsOnDevice(const Tensor& segment_ids, int64_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", segment_ids.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void SortedSegmentReduceOnDevice(const Tensor& data, const Tensor&, const Tensor&, Combiner,
                                 Tensor*, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", data.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void UnsortedSegmentReduceOnDevice(const Tensor& data, const Tensor&, Combiner, Tensor*,
                                   const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", data.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void ToPaddedOnDevice(const Tensor& values, const Tensor&, int64_t, uint64_t, Tensor*,
                      const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void FromPaddedOnDevice(const Tensor& dense, const Tensor&, Tensor*, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", dense.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

Tensor JaggedIndicesOnDevice(const Tensor& off, int64_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", off.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

Tensor OffsetsFromLengthsOnDevice(const Tensor& lengths, int64_t, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", lengths.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void GatherItemBlocksOnDevice(const std::vector<int64_t>&, const std::vector<const void*>&, int64_t,
                              Tensor* out, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", out->device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

FillPlan PlanFillOnDevice(const Tensor& idx, int64_t, bool, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", idx.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void FillOnDevice(const FillPlan&, const Tensor& idx, const Tensor&, uint64_t, Tensor*, Tensor*,
                  Tensor*, Tensor*, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", idx.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

void FillGradOnDevice(const Tensor& reverse, const Tensor&, int64_t, Tensor*, Tensor*,
                      const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", reverse.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

GradRows EmbeddingGradOnDevice(const Tensor& grad, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, Combiner, int64_t, int64_t, Tensor*, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", grad.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

}  // namespace tensorkit::features_cuda
