// tensorkit/features/embedding_device.h: one bag's reduction, and the pieces of the table
// gradient, written once for the host and a CUDA device (not a public header). The CUDA body of
// EmbeddingBag / EmbeddingBags runs ReduceBagColumns with one warp per bag, each lane over a few
// columns; host tests run the same function against the CPU kernels of embedding.cc, whose
// sequence of operations it repeats (embedding.cc Note [bag kernels]): per column, the rows
// added in id order into a compute-type accumulator starting at 0, `w * v` rounded before it is
// added (no fused multiply-add, on the device either), the weight sums alongside, then one
// division by the bag divisor (0 where it is 0). So the device gives the CPU's bits.
//
// The gradient (embedding_backward.cc Note [sorted gradient]) shares GradDivisor with its CPU
// body; its CUDA body finds each bag's winners with BagWinner and sums each run of one id with
// RunColumnSum, one warp per run, lanes over columns: the CPU body's sequence per column, which
// host tests check bit for bit.
#ifndef TENSORKIT_FEATURES_EMBEDDING_DEVICE_H_
#define TENSORKIT_FEATURES_EMBEDDING_DEVICE_H_

#include <cmath>
#include <cstdint>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/device_math.h"
#include "tensorkit/features/jagged_device.h"

namespace tensorkit::embedding_internal {

// The divisor of a bag's sum (see embedding_internal.h's glossary): `count` counts the
// non-padding ids, the sums run over their weights.
template <typename C>
TK_HOST_DEVICE inline C BagDivisor(Combiner combiner, bool weighted, int64_t count, C weight_sum,
                                   C square_sum) {
  switch (combiner) {
    case Combiner::kMean:
      return weighted ? weight_sum : static_cast<C>(count);
    case Combiner::kSqrtN:
      return std::sqrt(weighted ? square_sum : static_cast<C>(count));
    default:
      return C(1);
  }
}

// True when v replaces cur as the winner of a column (kMax or kMin; a later row replaces only
// when strictly better, so NaN never does).
template <typename C>
TK_HOST_DEVICE inline bool Replaces(Combiner combiner, C v, C cur) {
  return combiner == Combiner::kMax ? v > cur : v < cur;
}

using features_internal::Rounded;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// What a bag kernel reads and writes, on the CPU (embedding.cc) or a device: bag b's ids are
// ids[off[b] .. off[b + 1]) (int32 or int64, as the kernel's I) and its output row is
// out + (b - first_bag) * out_ld; table, ids and out hold the kernel's T, I and T. Ids are
// checked before any kernel runs (every one in [0, V) or the padding id).
template <typename C>
struct BagJob {
  const void* table = nullptr;
  int64_t table_ld = 0;
  int64_t d = 0;
  const void* ids = nullptr;
  const int64_t* off = nullptr;
  const C* weights = nullptr;  // null: unweighted
  int64_t padding_id = -1;
  Combiner combiner = Combiner::kSum;
  void* out = nullptr;
  int64_t out_ld = 0;
  int64_t first_bag = 0;
};

// Writes columns c, c + step, ..., c + (K - 1) * step (those below d) of bag `bag`'s output.
template <int K, typename T, typename I, typename C>
TK_HOST_DEVICE void ReduceBagColumns(const BagJob<C>& a, int64_t bag, int64_t c, int64_t step);

// Bag b's divisor for the gradient (BagDivisor: kSum 1, kMean the count or weight sum, kSqrtN
// its root) over the non-padding ids (int64) of offsets off, the weights (null: unweighted)
// summed in position order.
template <typename C>
TK_HOST_DEVICE C GradDivisor(const int64_t* ids, const int64_t* off, const C* weights,
                             int64_t padding_id, Combiner combiner, int64_t b);

// kMax / kMin: the position of bag b's winner in column c of table T (rows table + id * ld,
// read in the compute type), or -1 for a bag without non-padding ids.
template <typename T>
TK_HOST_DEVICE int64_t BagWinner(const T* table, int64_t ld, const int64_t* ids, const int64_t* off,
                                 int64_t padding_id, Combiner combiner, int64_t b, int64_t c);

// What the sums of the gradient read: grad T [batch, d] row-major, the offsets, the positions
// sorted stably by id, and either the bags' divisors (kSum, kMean, kSqrtN; weights of the
// compute type or null) or the winners [batch, d] (kMax, kMin).
template <typename C>
struct GradJob {
  const void* grad = nullptr;
  int64_t d = 0;
  const int64_t* perm = nullptr;
  const int64_t* bags = nullptr;  // bags[q]: the bag of position perm[q] (PositionBag)
  const C* weights = nullptr;
  const C* divisors = nullptr;
  const int64_t* winners = nullptr;  // non-null: kMax / kMin
};

// The bag of sorted position q, found once per position (GradJob::bags) rather than in every
// column's sum.
TK_HOST_DEVICE int64_t PositionBag(const int64_t* perm, const int64_t* off, int64_t batch,
                                   int64_t q);
// Column c of the gradient row of one id, whose positions are perm[begin, end): each position
// p of bag b adds grad[b, c] * w_p / (b's divisor), that product rounded first (or grad[b, c]
// where p is the column's winner), in sequence from 0.
template <typename T, typename C>
TK_HOST_DEVICE C RunColumnSum(const GradJob<C>& a, int64_t begin, int64_t end, int64_t c);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <int K, typename T, typename I, typename C>
TK_HOST_DEVICE inline void ReduceBagColumns(const BagJob<C>& a, int64_t bag, int64_t c,
                                            int64_t step) {
  const T* table = static_cast<const T*>(a.table);
  const I* ids = static_cast<const I*>(a.ids);
  const bool extreme = a.combiner == Combiner::kMax || a.combiner == Combiner::kMin;
  const bool weighted = a.weights != nullptr;
  C acc[K];
  for (int k = 0; k < K; ++k) acc[k] = C(0);  // also the max of a bag without ids
  int64_t count = 0;
  C weight_sum = C(0), square_sum = C(0);
  for (int64_t p = a.off[bag]; p < a.off[bag + 1]; ++p) {
    const int64_t id = static_cast<int64_t>(ids[p]);
    if (id == a.padding_id) continue;
    const T* row = table + id * a.table_ld;
    const C w = weighted ? a.weights[p] : C(1);
    if (weighted) {
      weight_sum = Rounded<false>(weight_sum, w);
      square_sum = Rounded<false>(square_sum, Rounded<true>(w, w));
    }
    for (int k = 0; k < K; ++k) {
      const int64_t col = c + k * step;
      if (col >= a.d) break;
      const C v = static_cast<C>(row[col]);
      if (extreme) {
        acc[k] = count == 0 || Replaces(a.combiner, v, acc[k]) ? v : acc[k];
      } else {
        acc[k] = Rounded<false>(acc[k], weighted ? Rounded<true>(w, v) : v);
      }
    }
    ++count;
  }
  const C divisor = BagDivisor<C>(a.combiner, weighted, count, weight_sum, square_sum);
  const bool divide = !extreme && a.combiner != Combiner::kSum;
  T* out = static_cast<T*>(a.out) + (bag - a.first_bag) * a.out_ld;
  for (int k = 0; k < K; ++k) {
    const int64_t col = c + k * step;
    if (col >= a.d) break;
    C v = acc[k];
    if (divide) v = divisor == C(0) ? C(0) : v / divisor;
    out[col] = static_cast<T>(v);
  }
}

template <typename C>
TK_HOST_DEVICE inline C GradDivisor(const int64_t* ids, const int64_t* off, const C* weights,
                                    int64_t padding_id, Combiner combiner, int64_t b) {
  int64_t count = 0;
  C weight_sum = C(0), square_sum = C(0);
  for (int64_t p = off[b]; p < off[b + 1]; ++p) {
    if (ids[p] == padding_id) continue;
    ++count;
    if (weights != nullptr) {
      weight_sum = Rounded<false>(weight_sum, weights[p]);
      square_sum = Rounded<false>(square_sum, Rounded<true>(weights[p], weights[p]));
    }
  }
  return BagDivisor<C>(combiner, weights != nullptr, count, weight_sum, square_sum);
}

template <typename T>
TK_HOST_DEVICE inline int64_t BagWinner(const T* table, int64_t ld, const int64_t* ids,
                                        const int64_t* off, int64_t padding_id, Combiner combiner,
                                        int64_t b, int64_t c) {
  using C = ComputeType<T>;
  int64_t winner = -1;
  C best = C(0);
  for (int64_t p = off[b]; p < off[b + 1]; ++p) {
    if (ids[p] == padding_id) continue;
    const C v = static_cast<C>(table[ids[p] * ld + c]);
    if (winner < 0 || Replaces(combiner, v, best)) {
      best = v;
      winner = p;
    }
  }
  return winner;
}

TK_HOST_DEVICE inline int64_t PositionBag(const int64_t* perm, const int64_t* off, int64_t batch,
                                          int64_t q) {
  return jagged_internal::RowOfItem(off, batch, perm[q]);
}

template <typename T, typename C>
TK_HOST_DEVICE inline C RunColumnSum(const GradJob<C>& a, int64_t begin, int64_t end, int64_t c) {
  const T* grad = static_cast<const T*>(a.grad);
  C acc = C(0);
  for (int64_t q = begin; q < end; ++q) {
    const int64_t p = a.perm[q];
    const int64_t b = a.bags[q];
    const C g = static_cast<C>(grad[b * a.d + c]);
    if (a.winners != nullptr) {
      if (a.winners[b * a.d + c] == p) acc = Rounded<false>(acc, g);
      continue;
    }
    // k_p = w_p / the bag's divisor, 0 where that is 0 (div_no_nan).
    const C divisor = a.divisors[b];
    const C kp = divisor == C(0) ? C(0) : (a.weights != nullptr ? a.weights[p] : C(1)) / divisor;
    acc = Rounded<false>(acc, Rounded<true>(kp, g));
  }
  return acc;
}

}  // namespace tensorkit::embedding_internal

#endif  // TENSORKIT_FEATURES_EMBEDDING_DEVICE_H_
