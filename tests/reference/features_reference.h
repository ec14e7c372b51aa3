// tests/reference/features_reference.h: deliberately naive oracles for the features/ operations,
// used by the tests. One section per operation family; each works on plain std::vectors with
// simple loops in the order the operation's contract states, so that it can check the library
// bit for bit where the contract fixes the arithmetic.
#ifndef TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
#define TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tensorkit/features/combiner.h"

namespace tensorkit::ref {

// --- embedding ---
//
// Bags: offsets [B + 1] into ids [N]; weights [N] or empty (unweighted). A table is V * D
// values in row-major order, already widened to the compute type C. Results are C values; the
// caller rounds them to the table's dtype.

// EmbeddingBag: for each bag and column, in id order: the (weighted) sum divided by the bag
// divisor (1, count or weight sum, their root; 0 when it is 0), or the first strictly larger
// (smaller) value for max (min). Padding ids are skipped; a bag without ids gives 0.
template <typename C>
std::vector<C> EmbeddingBagRef(const std::vector<C>& table, int64_t d,
                               const std::vector<int64_t>& offsets, const std::vector<int64_t>& ids,
                               const std::vector<C>& weights, Combiner combiner,
                               int64_t padding_id) {
  const int64_t b = static_cast<int64_t>(offsets.size()) - 1;
  const bool weighted = !weights.empty();
  std::vector<C> out(static_cast<size_t>(b * d), C(0));
  for (int64_t bag = 0; bag < b; ++bag) {
    for (int64_t c = 0; c < d; ++c) {
      C acc = 0, weight_sum = 0, square_sum = 0;
      int64_t count = 0;
      bool any = false;
      for (int64_t p = offsets[bag]; p < offsets[bag + 1]; ++p) {
        if (ids[p] == padding_id) continue;
        const C x = table[ids[p] * d + c];
        if (combiner == Combiner::kMax || combiner == Combiner::kMin) {
          if (!any || (combiner == Combiner::kMax ? x > acc : x < acc)) acc = x;
        } else if (weighted) {
          acc += weights[p] * x;
          weight_sum += weights[p];
          square_sum += weights[p] * weights[p];
        } else {
          acc += x;
        }
        ++count;
        any = true;
      }
      C divisor = 1;
      if (combiner == Combiner::kMean) divisor = weighted ? weight_sum : static_cast<C>(count);
      if (combiner == Combiner::kSqrtN) {
        divisor = std::sqrt(weighted ? square_sum : static_cast<C>(count));
      }
      C v = acc;
      if (combiner == Combiner::kMean || combiner == Combiner::kSqrtN) {
        v = divisor == C(0) ? C(0) : acc / divisor;
      }
      out[bag * d + c] = v;
    }
  }
  return out;
}

// The table gradient [V * D] of EmbeddingBagRef for grad [B * D], every contribution added in
// position order: grad * (w / divisor) for the sums; for max (min) grad[bag, c] to the row of
// the first position holding the winning value of column c. `touched` (when given) receives V
// flags: true for the rows of non-padding ids.
template <typename C>
std::vector<C> EmbeddingBagGradRef(const std::vector<C>& grad, int64_t num_rows, int64_t d,
                                   const std::vector<int64_t>& offsets,
                                   const std::vector<int64_t>& ids, const std::vector<C>& weights,
                                   Combiner combiner, int64_t padding_id,
                                   const std::vector<C>& table, std::vector<bool>* touched) {
  const bool weighted = !weights.empty();
  std::vector<C> out(static_cast<size_t>(num_rows * d), C(0));
  if (touched) touched->assign(static_cast<size_t>(num_rows), false);
  for (int64_t p = 0; p < static_cast<int64_t>(ids.size()); ++p) {
    if (ids[p] == padding_id) continue;
    if (touched) (*touched)[ids[p]] = true;
    int64_t bag = 0;
    while (offsets[bag + 1] <= p) ++bag;
    for (int64_t c = 0; c < d; ++c) {
      const C g = grad[bag * d + c];
      if (combiner == Combiner::kMax || combiner == Combiner::kMin) {
        // The winner: the first position whose value no later one strictly beats.
        int64_t win = -1;
        C best = 0;
        for (int64_t q = offsets[bag]; q < offsets[bag + 1]; ++q) {
          if (ids[q] == padding_id) continue;
          const C x = table[ids[q] * d + c];
          if (win < 0 || (combiner == Combiner::kMax ? x > best : x < best)) {
            win = q;
            best = x;
          }
        }
        if (win == p) out[ids[p] * d + c] += g;
        continue;
      }
      int64_t count = 0;
      C weight_sum = 0, square_sum = 0;
      for (int64_t q = offsets[bag]; q < offsets[bag + 1]; ++q) {
        if (ids[q] == padding_id) continue;
        ++count;
        if (weighted) {
          weight_sum += weights[q];
          square_sum += weights[q] * weights[q];
        }
      }
      C divisor = 1;
      if (combiner == Combiner::kMean) divisor = weighted ? weight_sum : static_cast<C>(count);
      if (combiner == Combiner::kSqrtN) {
        divisor = std::sqrt(weighted ? square_sum : static_cast<C>(count));
      }
      const C w = weighted ? weights[p] : C(1);
      const C k = divisor == C(0) ? C(0) : w / divisor;
      out[ids[p] * d + c] += g * k;
    }
  }
  return out;
}

}  // namespace tensorkit::ref

#endif  // TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
