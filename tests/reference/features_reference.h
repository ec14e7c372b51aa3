// tests/reference/features_reference.h: a deliberately naive oracle for features/, used by the
// tests.
//
// Glossary
//   row           data viewed as [n, d]: row k is data[k * d .. (k + 1) * d).
//   naive         one loop per output row over every input entry, no sorting, no parallelism;
//                 the accumulation runs in the same sequence as the operations define it (entry
//                 order, starting from the first row, 16-bit floats in float32), so results
//                 compare exactly.
//   item          one element of a jagged tensor's values along axis 0 (a number, or a row of
//                 D... numbers); items are named by their position in the values.
//   item map      what a layout-changing operation does, without the values: for each output
//                 item, the input item it copies (or -1 for padding). The tests apply it to the
//                 input values of every dtype and compare bit for bit, so one oracle serves all.
//   KJT layout    a keyed jagged tensor without its values: keys, batch size and lengths [F * B]
//                 (feature-major).
//
// Everything here is header-only, CPU-only and slow on purpose. It throws std::logic_error on
// misuse (a bug in a test, not a user error of tensorkit).
#ifndef TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
#define TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/features/combiner.h"

namespace tensorkit::ref {

// --- segments and empty rows -----------------------------------------------------------------

// What an empty output row holds: 0, or for the unsorted max and min the dtype's lowest and
// highest values.
template <typename T>
T SegmentEmptyValue(Combiner c, bool unsorted) {
  if (unsorted && (c == Combiner::kMax || c == Combiner::kMin)) {
    const bool max = c == Combiner::kMax;
    if constexpr (std::is_same_v<T, Half>) {
      return T(max ? -65504.0f : 65504.0f);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      return BFloat16::FromBits(max ? 0xff7f : 0x7f7f);
    } else {
      return max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  return T(0);
}

// The sequence in which a segment's rows are added (TensorFlow's kernels, Note [summation
// order] in features/segment.cc).
enum class SumOrder {
  kCopyFirst,  // x0, then + x1, + x2, ... (SparseSegmentReduceGrad)
  kEigen,      // the same, several rows starting from +0 (SegmentReduce)
  kFromZero,   // 0 + x0 + x1 + ... (UnsortedSegmentReduce)
  kBlocks,     // SparseSegmentReduce: a first block of n % 8 rows (8 for 0, 9 for 1), scaled by
               // 1 / n or 1 / sqrt(n) when n < 10, then blocks of 8; n >= 10 divides at the end
};

// Output row s of num_out reduces the rows src[k] of data (n rows of d) for the k, in
// ascending order, with ids[k] == s (entries with a negative id are skipped). weight, when
// not empty, multiplies each row (sums only).
template <typename T>
std::vector<T> SegmentReduce(const std::vector<T>& data, int64_t d, const std::vector<int64_t>& src,
                             const std::vector<int64_t>& ids, int64_t num_out, Combiner c,
                             SumOrder order, const std::vector<double>& weight = {}) {
  using A = ComputeType<T>;
  if (src.size() != ids.size()) throw std::logic_error("ref::SegmentReduce: sizes differ");
  const bool scaled = c == Combiner::kMean || c == Combiner::kSqrtN;
  std::vector<T> out(static_cast<size_t>(num_out * d));
  for (int64_t s = 0; s < num_out; ++s) {
    for (int64_t t = 0; t < d; ++t) {
      std::vector<A> v;  // this element of the segment's rows, in entry order
      for (size_t k = 0; k < ids.size(); ++k) {
        if (ids[k] != s) continue;
        A x = static_cast<A>(data.at(static_cast<size_t>(src[k] * d + t)));
        if (!weight.empty()) x = x * static_cast<A>(weight[k]);
        v.push_back(x);
      }
      const int64_t n = static_cast<int64_t>(v.size());
      const bool unsorted = order == SumOrder::kFromZero;
      if (n == 0) {
        out[static_cast<size_t>(s * d + t)] = SegmentEmptyValue<T>(c, unsorted);
        continue;
      }
      A acc = v[0];
      bool divided = false;
      if (c == Combiner::kMax || c == Combiner::kMin) {
        for (int64_t k = 1; k < n; ++k) {
          if (c == Combiner::kMax ? acc < v[k] : v[k] < acc) acc = v[k];
        }
      } else if (order == SumOrder::kBlocks && n > 1) {
        const int64_t r = n % 8;
        const int64_t first = r == 0 ? 8 : r == 1 ? 9 : r;
        A scale = A(1);
        if constexpr (std::is_floating_point_v<A>) {
          if (scaled && n < 10) {
            const double m = static_cast<double>(n);
            scale = A(1) / static_cast<A>(c == Combiner::kMean ? m : std::sqrt(m));
            divided = true;
          }
        }
        for (int64_t k = 1; k < first; ++k) acc = AddW<A>(acc, v[k]);
        if (divided) acc = acc * scale;
        for (int64_t j = first; j < n; j += 8) {
          A block = v[j];
          for (int64_t k = j + 1; k < j + 8; ++k) block = AddW<A>(block, v[k]);
          acc = AddW<A>(acc, block);
        }
      } else {
        const bool from_zero = unsorted || (order == SumOrder::kEigen && n > 1);
        if (from_zero) acc = AddW<A>(A(0), v[0]);
        for (int64_t k = 1; k < n; ++k) acc = AddW<A>(acc, v[k]);
      }
      if constexpr (std::is_floating_point_v<A>) {
        if (scaled && !divided) {
          const double m = static_cast<double>(n);
          acc = acc / static_cast<A>(c == Combiner::kMean ? m : std::sqrt(m));
        }
      }
      out[static_cast<size_t>(s * d + t)] = static_cast<T>(acc);
    }
  }
  return out;
}

// SparseSegmentReduceGrad: output row r (of num_rows) sums grad[ids[k]] * scale(ids[k]) over
// the k with indices[k] == r, scale 1, 1 / max(n, 1) or 1 / sqrt(max(n, 1)) for a segment of n
// entries.
template <typename T>
std::vector<T> SparseSegmentGrad(const std::vector<T>& grad, int64_t d,
                                 const std::vector<int64_t>& indices,
                                 const std::vector<int64_t>& ids, int64_t num_segments,
                                 int64_t num_rows, Combiner c) {
  std::vector<double> weight;
  if (c != Combiner::kSum) {
    for (size_t k = 0; k < ids.size(); ++k) {
      int64_t n = 0;
      for (int64_t id : ids) n += id == ids[k];
      const double m = static_cast<double>(n);
      weight.push_back(1.0 / (c == Combiner::kMean ? m : std::sqrt(m)));
    }
  }
  (void)num_segments;
  return SegmentReduce<T>(grad, d, ids, indices, num_rows, Combiner::kSum, SumOrder::kCopyFirst,
                          weight);
}

// FillEmptyRows on host rows (nnz x rank) and values: row by row, each row's entries in input
// order, or (r, 0, ...) = fill when it has none.
template <typename T>
struct FilledRows {
  std::vector<int64_t> indices;  // n_out x rank
  std::vector<T> values;
  std::vector<bool> empty;
  std::vector<int64_t> reverse;
};

template <typename T>
FilledRows<T> FillEmptyRows(const std::vector<int64_t>& indices, const std::vector<T>& values,
                            int rank, int64_t rows, const T& fill) {
  FilledRows<T> out;
  const int64_t nnz = static_cast<int64_t>(values.size());
  out.reverse.assign(static_cast<size_t>(nnz), -1);
  for (int64_t r = 0; r < rows; ++r) {
    bool any = false;
    for (int64_t i = 0; i < nnz; ++i) {
      if (indices[static_cast<size_t>(i * rank)] != r) continue;
      any = true;
      out.reverse[static_cast<size_t>(i)] = static_cast<int64_t>(out.values.size());
      for (int a = 0; a < rank; ++a)
        out.indices.push_back(indices[static_cast<size_t>(i * rank + a)]);
      out.values.push_back(values[static_cast<size_t>(i)]);
    }
    out.empty.push_back(!any);
    if (!any) {
      out.indices.push_back(r);
      for (int a = 1; a < rank; ++a) out.indices.push_back(0);
      out.values.push_back(fill);
    }
  }
  return out;
}

// FillEmptyRowsGrad: d_values[k] = grad[reverse[k]]; the default's gradient sums, in position
// order, the grad entries that reverse never names.
template <typename T>
std::pair<std::vector<T>, T> FillEmptyRowsGrad(const std::vector<int64_t>& reverse,
                                               const std::vector<T>& grad) {
  using A = ComputeType<T>;
  std::vector<T> d_values;
  std::vector<bool> used(grad.size(), false);
  for (int64_t j : reverse) {
    d_values.push_back(grad.at(static_cast<size_t>(j)));
    used[static_cast<size_t>(j)] = true;
  }
  A sum = A(0);
  for (size_t j = 0; j < grad.size(); ++j) {
    if (!used[j]) sum = AddW<A>(sum, static_cast<A>(grad[j]));
  }
  return {d_values, static_cast<T>(sum)};
}

// --- jagged ---------------------------------------------------------------------------------

// Row i of a 2-D COO tensor with B rows (idx: nnz (row, column) pairs) holds its entries sorted by
// column. Returns the entry positions in that row-by-row sequence; offsets receives [B + 1].
inline std::vector<int64_t> JaggedFromSparse(const std::vector<int64_t>& idx, int64_t b,
                                             std::vector<int64_t>* offsets) {
  const int64_t nnz = static_cast<int64_t>(idx.size()) / 2;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rows(static_cast<size_t>(b));
  for (int64_t e = 0; e < nnz; ++e) {
    const int64_t r = idx[2 * e];
    if (r < 0 || r >= b) throw std::logic_error("JaggedFromSparse: row out of range");
    rows[r].push_back({idx[2 * e + 1], e});
  }
  std::vector<int64_t> entries;
  offsets->assign(1, 0);
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    for (const auto& [col, e] : row) entries.push_back(e);
    offsets->push_back(static_cast<int64_t>(entries.size()));
  }
  return entries;
}

// The (row, column) pairs of ToSparse: (i, j) for the j-th item of row i, row by row; max_len
// receives the longest row's length (0 for no rows).
inline std::vector<int64_t> JaggedSparseIndices(const std::vector<int64_t>& offsets,
                                                int64_t* max_len) {
  std::vector<int64_t> idx;
  *max_len = 0;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const int64_t n = offsets[i + 1] - offsets[i];
    *max_len = std::max(*max_len, n);
    for (int64_t j = 0; j < n; ++j) {
      idx.push_back(static_cast<int64_t>(i));
      idx.push_back(j);
    }
  }
  return idx;
}

// The item map of ToPadded: position (i, j) of [B, len] holds item offsets[i] + j when j is
// below row i's length, else padding (-1). len -1 means the longest row.
inline std::vector<int64_t> PaddedItems(const std::vector<int64_t>& offsets, int64_t len) {
  const int64_t b = static_cast<int64_t>(offsets.size()) - 1;
  if (len < 0) {
    len = 0;
    for (int64_t i = 0; i < b; ++i) len = std::max(len, offsets[i + 1] - offsets[i]);
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < len; ++j) {
      out.push_back(j < offsets[i + 1] - offsets[i] ? offsets[i] + j : -1);
    }
  }
  return out;
}

// The item map of FromPadded: the items dense[i, j] (position i * len + j of [B * len]) for
// j < lengths[i], row by row.
inline std::vector<int64_t> UnpaddedItems(const std::vector<int64_t>& lengths, int64_t len) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < lengths.size(); ++i) {
    for (int64_t j = 0; j < lengths[i]; ++j) out.push_back(static_cast<int64_t>(i) * len + j);
  }
  return out;
}

// A keyed jagged tensor without its values.
struct KjtLayout {
  std::vector<std::string> keys;
  int64_t batch = 0;
  std::vector<int64_t> lengths;  // [F * B], feature-major
};

// Where an output item of a keyed operation comes from: item `item` of input `part`.
struct ItemSource {
  int part = 0;
  int64_t item = 0;
};

// The first item of every row (feature-major) of a layout: the lengths before it, added up.
inline std::vector<int64_t> RowStarts(const KjtLayout& in) {
  std::vector<int64_t> starts(in.lengths.size() + 1, 0);
  for (size_t r = 0; r < in.lengths.size(); ++r) starts[r + 1] = starts[r] + in.lengths[r];
  return starts;
}

// Appends row `row` of input `part` (its lengths entry and its items) to out and items.
inline void AppendRow(const KjtLayout& in, const std::vector<int64_t>& starts, int part,
                      int64_t row, KjtLayout* out, std::vector<ItemSource>* items) {
  out->lengths.push_back(in.lengths[row]);
  for (int64_t j = 0; j < in.lengths[row]; ++j) items->push_back({part, starts[row] + j});
}

// The position of `key` in in.keys.
inline int64_t KeyPosition(const KjtLayout& in, const std::string& key) {
  for (size_t f = 0; f < in.keys.size(); ++f) {
    if (in.keys[f] == key) return static_cast<int64_t>(f);
  }
  throw std::logic_error("KeyPosition: unknown key " + key);
}

// Permute: the features `keys` in that sequence, row by row.
inline KjtLayout KjtPermute(const KjtLayout& in, const std::vector<std::string>& keys,
                            std::vector<ItemSource>* items) {
  KjtLayout out{keys, in.batch, {}};
  items->clear();
  const std::vector<int64_t> starts = RowStarts(in);
  for (const std::string& key : keys) {
    const int64_t f = KeyPosition(in, key);
    for (int64_t i = 0; i < in.batch; ++i) {
      AppendRow(in, starts, 0, f * in.batch + i, &out, items);
    }
  }
  return out;
}

// Concat along the batch: per feature, every part's rows in part order.
inline KjtLayout KjtConcat(const std::vector<KjtLayout>& parts, std::vector<ItemSource>* items) {
  KjtLayout out{parts.at(0).keys, 0, {}};
  items->clear();
  std::vector<std::vector<int64_t>> starts;
  for (const KjtLayout& p : parts) {
    out.batch += p.batch;
    starts.push_back(RowStarts(p));
  }
  for (size_t f = 0; f < out.keys.size(); ++f) {
    for (size_t p = 0; p < parts.size(); ++p) {
      for (int64_t i = 0; i < parts[p].batch; ++i) {
        AppendRow(parts[p], starts[p], static_cast<int>(p),
                  static_cast<int64_t>(f) * parts[p].batch + i, &out, items);
      }
    }
  }
  return out;
}

// Split along the batch into pieces of `sizes` rows; items[k] is piece k's item map.
inline std::vector<KjtLayout> KjtSplit(const KjtLayout& in, const std::vector<int64_t>& sizes,
                                       std::vector<std::vector<ItemSource>>* items) {
  std::vector<KjtLayout> out;
  items->assign(sizes.size(), {});
  const std::vector<int64_t> starts = RowStarts(in);
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    KjtLayout piece{in.keys, sizes[k], {}};
    for (size_t f = 0; f < in.keys.size(); ++f) {
      for (int64_t i = start; i < start + sizes[k]; ++i) {
        AppendRow(in, starts, 0, static_cast<int64_t>(f) * in.batch + i, &piece, &(*items)[k]);
      }
    }
    out.push_back(piece);
    start += sizes[k];
  }
  return out;
}

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

// --- vocabularies ----------------------------------------------------------------------------

// Keras's fit of a vocabulary from values (T std::string or int64_t): the distinct values but
// `mask` seen at least min_frequency times, by count descending, then value ascending (or
// descending), the first max_tokens (-1: all). Counted with a linear scan per value.
template <typename T>
std::vector<T> VocabularyFit(const std::vector<T>& values, int64_t min_frequency,
                             int64_t max_tokens, bool ascending, const T* mask = nullptr) {
  std::vector<std::pair<T, int64_t>> counts;
  for (const T& v : values) {
    bool found = false;
    for (auto& c : counts) {
      if (c.first == v) {
        ++c.second;
        found = true;
        break;
      }
    }
    if (!found) counts.push_back({v, 1});
  }
  std::sort(counts.begin(), counts.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return ascending ? a.first < b.first : b.first < a.first;
  });
  std::vector<T> out;
  for (const auto& c : counts) {
    if (c.second < min_frequency || (mask && c.first == *mask)) continue;
    if (max_tokens >= 0 && static_cast<int64_t>(out.size()) >= max_tokens) break;
    out.push_back(c.first);
  }
  return out;
}

// Keras's StringLookup / IntegerLookup ids of `values` for `vocab`: the mask (when given) is 0,
// then num_oov OOV ids, then the tokens; oov_bucket(v) picks an OOV value's id among the OOV ids
// when num_oov > 1. An OOV value with num_oov == 0 gives -1 (the library throws).
template <typename T, typename Bucket>
std::vector<int64_t> VocabularyLookup(const std::vector<T>& vocab, const std::vector<T>& values,
                                      int64_t num_oov, const T* mask, const Bucket& oov_bucket) {
  const int64_t oov_start = mask ? 1 : 0;
  std::vector<int64_t> out;
  for (const T& v : values) {
    if (mask && v == *mask) {
      out.push_back(0);
      continue;
    }
    const auto it = std::find(vocab.begin(), vocab.end(), v);
    if (it != vocab.end()) {
      out.push_back(oov_start + num_oov + (it - vocab.begin()));
    } else if (num_oov == 0) {
      out.push_back(-1);
    } else {
      out.push_back(oov_start + (num_oov == 1 ? 0 : oov_bucket(v)));
    }
  }
  return out;
}

// --- bucketize and counts --------------------------------------------------------------------

// TensorFlow's Bucketize of one value: the first boundary the value is below, found by a linear
// scan, comparing as C++ compares T with B (the value and boundary types).
template <typename T, typename B>
int32_t Bucketize(T value, const std::vector<B>& boundaries) {
  for (size_t i = 0; i < boundaries.size(); ++i) {
    if (value < boundaries[i]) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(boundaries.size());
}

// One output entry of a count: (row, id) and its value.
template <typename W>
struct CountEntry {
  int64_t row, id;
  W value;
  bool operator==(const CountEntry&) const = default;
};

// TensorFlow's SparseCountSparseOutput over entries (rows[i], ids[i]) in entry order: one scan
// per (row, id) pair, summing weights (or counting 1s) in entry order; ids outside
// [0, limit) are skipped. The pairs come out sorted by (row, id).
template <typename W>
std::vector<CountEntry<W>> CountSparse(const std::vector<int64_t>& rows,
                                       const std::vector<int64_t>& ids,
                                       const std::vector<W>& weights, bool binary, int64_t limit) {
  if (rows.size() != ids.size() || (!weights.empty() && weights.size() != ids.size())) {
    throw std::logic_error("ref::CountSparse: rows, ids and weights differ in length");
  }
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= 0 && ids[i] < limit) keys.emplace_back(rows[i], ids[i]);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<CountEntry<W>> out;
  for (const auto& [r, v] : keys) {
    W sum = 0;  // from zero, so a lone -0.0 weight sums to +0.0 (as in TensorFlow)
    for (size_t i = 0; i < ids.size(); ++i) {
      if (rows[i] != r || ids[i] != v) continue;
      sum = static_cast<W>(sum + (weights.empty() || binary ? W(1) : weights[i]));
    }
    if (binary) sum = W(1);
    out.push_back({r, v, sum});
  }
  return out;
}

}  // namespace tensorkit::ref

#endif  // TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
