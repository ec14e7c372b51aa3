// tensorkit/features/features_internal.h: checks and helpers shared by features/ sources (not a
// public header).
#ifndef TENSORKIT_FEATURES_FEATURES_INTERNAL_H_
#define TENSORKIT_FEATURES_FEATURES_INTERNAL_H_

#include <cstdint>

#include "tensorkit/dense/tensor.h"

namespace tensorkit::features_internal {

// Throws unless values is defined with at least one axis (the item axis).
void CheckJaggedValues(const Tensor& values, const char* op);
// Throws kDeviceMismatch naming both devices unless `other` (called `what`) is on values'
// device.
void CheckSameDevice(const Tensor& values, const Tensor& other, const char* what, const char* op);
// A contiguous int64 offsets tensor on the CPU (offsets itself when it is one).
Tensor HostOffsets(const Tensor& offsets);
// Throws naming the first bad offset unless off[0] == 0, off is non-decreasing and
// off[n - 1] == num_values.
void CheckOffsets(const int64_t* off, int64_t n, int64_t num_values, const char* op);
// The CPU int64 offsets [B + 1] of lengths (int32 or int64 [B], any device): each length >= 0
// and their sum == num_values, else an Error naming the first bad length.
Tensor OffsetsFromLengths(const Tensor& lengths, int64_t num_values, const char* op);
// Throws unless weights is a float tensor [n] on values' device.
void CheckWeights(const Tensor& weights, int64_t n, const Tensor& values, const char* op);

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_FEATURES_INTERNAL_H_
