// tensorkit/features/fill_device.h: where FillEmptyRows puts each entry and how its gradient
// sums the default value's share, written once for the host and a CUDA device (not a public
// header). The CUDA body of FillEmptyRows gives each grouped entry and each row a thread that
// asks the slot functions; host tests check them against the CPU body. FillEmptyRowsGrad's sums
// run these functions on the CPU and on the device alike, so the bits are the same.
//
// Glossary
//   grouped entry  the entries sorted stably by row: entry q of that sequence lies in row r.
//   start          start[r]: the first grouped entry whose row is >= r ([rows + 1]).
//   empties        empties[r]: the rows before r without entries ([rows + 1]; empties[rows] is
//                  the number of default entries the output gains).
#ifndef TENSORKIT_FEATURES_FILL_DEVICE_H_
#define TENSORKIT_FEATURES_FILL_DEVICE_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"
#include "tensorkit/common/wrap.h"

namespace tensorkit::features_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The output slot of grouped entry q in row r: each empty row before r puts its default entry
// in front.
TK_HOST_DEVICE int64_t EntrySlot(const int64_t* empties, int64_t r, int64_t q);
// The output slot of the default entry of empty row r.
TK_HOST_DEVICE int64_t DefaultSlot(const int64_t* start, const int64_t* empties, int64_t r);

// The sum of grad[j] over the positions j in [b, e) that no map entry names (used[j] == 0), in
// position order, in the accumulation type Acc: one fixed chunk of FillEmptyRowsGrad's sum.
template <typename Acc, typename T>
TK_HOST_DEVICE Acc UnusedSum(const T* grad, const uint8_t* used, int64_t b, int64_t e);
// parts[0] + parts[1] + ... in that order: the chunks' sums joined.
template <typename Acc>
TK_HOST_DEVICE Acc SumInOrder(const Acc* parts, int64_t n);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

TK_HOST_DEVICE inline int64_t EntrySlot(const int64_t* empties, int64_t r, int64_t q) {
  return q + empties[r];
}

TK_HOST_DEVICE inline int64_t DefaultSlot(const int64_t* start, const int64_t* empties, int64_t r) {
  return start[r] + empties[r];
}

template <typename Acc, typename T>
TK_HOST_DEVICE inline Acc UnusedSum(const T* grad, const uint8_t* used, int64_t b, int64_t e) {
  Acc s = Acc(0);
  for (int64_t j = b; j < e; ++j) {
    if (!used[j]) s = AddW<Acc>(s, static_cast<Acc>(grad[j]));
  }
  return s;
}

template <typename Acc>
TK_HOST_DEVICE inline Acc SumInOrder(const Acc* parts, int64_t n) {
  Acc total = Acc(0);
  for (int64_t c = 0; c < n; ++c) total = AddW<Acc>(total, parts[c]);
  return total;
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_FILL_DEVICE_H_
