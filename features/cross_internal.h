// tensorkit/features/cross_internal.h: the crossing engine behind Cross, shared with the
// TensorFlow ops, which feed it TensorFlow's buffers without copying (not a public header).
//
// A cross runs in three steps: each feature becomes a CrossColumn (its rows, and its items as
// hashes or as bytes, computed once per item rather than once per cross), PlanCross counts the
// crosses of every row, and HashedCrosses / StringCrosses write them, one task per row.
#ifndef TENSORKIT_FEATURES_CROSS_INTERNAL_H_
#define TENSORKIT_FEATURES_CROSS_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/features/cross.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/hash_internal.h"

namespace tensorkit::features_internal {

// One feature's rows and items.
struct CrossColumn {
  bool dense = false;
  int64_t width = 0;                    // dense: items per row
  std::vector<int64_t> offsets;         // otherwise [B + 1] into the items
  std::vector<uint64_t> hashes;         // item hashes (hashed outputs)
  std::vector<std::string_view> bytes;  // item bytes (string output)
  std::vector<std::string> decimals;    // the bytes of integer items (string output)

  int64_t Begin(int64_t b) const { return dense ? b * width : offsets[b]; }
  int64_t Count(int64_t b) const { return dense ? width : offsets[b + 1] - offsets[b]; }
};

// The rows of a [B, L] sparse feature from its int64 indices [nnz, 2]: offsets into the items
// and, when the rows are not sorted, *order (item k is entry order[k]; entries of a row keep
// their order). An index outside [0, B) x [0, L) is an Error naming feature `feature` and the
// entry.
void SparseCrossRows(const int64_t* indices, int64_t nnz, int64_t batch, int64_t width, int feature,
                     const char* op, CrossColumn* column, std::vector<int64_t>* order);

// The hash of a string item / of an integer item under the options (cross.h's table).
uint64_t CrossItemHash(const CrossOptions& o, std::string_view bytes);
uint64_t CrossItemHash(const CrossOptions& o, bool dense, int64_t value);

// Sets the column's items from n source items: string_item(i) gives source item i's bytes
// (valid until the cross is written); item k is source item order[k] (order may be null).
template <typename StringItem>
void SetStringItems(CrossColumn* c, int64_t n, const int64_t* order, const CrossOptions& o,
                    const StringItem& string_item) {
  const bool hashed = o.output != CrossOutput::kStrings;
  if (hashed) c->hashes.resize(static_cast<size_t>(n));
  if (!hashed) c->bytes.resize(static_cast<size_t>(n));
  ParallelChunks(n, int64_t{1} << 12, [&](int64_t, int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const std::string_view s = string_item(order == nullptr ? k : order[k]);
      if (hashed) {
        c->hashes[k] = CrossItemHash(o, s);
      } else {
        c->bytes[k] = s;
      }
    }
  });
}

// The same for integer items int_item(i).
template <typename IntItem>
void SetIntItems(CrossColumn* c, int64_t n, const int64_t* order, const CrossOptions& o,
                 const IntItem& int_item) {
  const bool hashed = o.output != CrossOutput::kStrings;
  if (hashed) c->hashes.resize(static_cast<size_t>(n));
  if (!hashed) c->decimals.resize(static_cast<size_t>(n));
  ParallelChunks(n, int64_t{1} << 12, [&](int64_t, int64_t b, int64_t e) {
    DecimalBuffer buf;
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = int_item(order == nullptr ? k : order[k]);
      if (hashed) {
        c->hashes[k] = CrossItemHash(o, c->dense, v);
      } else {
        c->decimals[k] = std::string(DecimalOf(v, &buf));
      }
    }
  });
  if (!hashed) c->bytes.assign(c->decimals.begin(), c->decimals.end());
}

// Where each row's crosses go.
struct CrossPlan {
  int64_t batch = 0;
  std::vector<int64_t> start;  // [B + 1]: row b's crosses are start[b] .. start[b + 1] - 1
  int64_t max_count = 0;       // the output's second dim
  int64_t total() const { return start.back(); }
};
// Counts the crosses of every row (an Error when a count or the total overflows int64).
CrossPlan PlanCross(const std::vector<CrossColumn>& columns, int64_t batch, const char* op);
// indices [total, 2]: (b, j) for row b's j-th cross.
void CrossIndices(const CrossPlan& plan, int64_t* indices);
// The hashed crosses (kHashed or kHashedKeyed) into out [total].
void HashedCrosses(const std::vector<CrossColumn>& columns, const CrossPlan& plan,
                   const CrossOptions& o, int64_t* out);
// The string crosses: store(position, bytes) for every cross (bytes valid during the call).
void StringCrosses(const std::vector<CrossColumn>& columns, const CrossPlan& plan,
                   std::string_view separator,
                   const std::function<void(int64_t, std::string_view)>& store);

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_CROSS_INTERNAL_H_
