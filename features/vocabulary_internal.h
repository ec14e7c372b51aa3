// tensorkit/features/vocabulary_internal.h: what the vocabulary sources share (not a public
// header).
#ifndef TENSORKIT_FEATURES_VOCABULARY_INTERNAL_H_
#define TENSORKIT_FEATURES_VOCABULARY_INTERNAL_H_

#include <cstdint>

#include "tensorkit/dense/tensor.h"

namespace tensorkit::features_internal {

// A bijective mix of an integer token (SplitMix64's finalizer), so that every bit of the key
// reaches the bits a table takes its slot and partition from; sequential ids would otherwise
// fill runs of neighbouring slots.
inline uint64_t MixInt64(int64_t v) {
  uint64_t z = static_cast<uint64_t>(v);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Throws unless values is a defined kString, int32 or int64 tensor on the CPU (`op` names the
// caller in the message).
// Throws unless values is a defined kString, int32 or int64 tensor (on any device).
void CheckVocabularyValues(const Tensor& values, const char* op);

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_VOCABULARY_INTERNAL_H_
