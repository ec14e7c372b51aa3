// tests/reference/features_reference.h: a deliberately naive oracle for features/, used by the
// tests.
//
// Glossary
//   item          one element of a jagged tensor's values along axis 0 (a number, or a row of
//                 D... numbers); items are named by their position in the values.
//   item map      what a layout-changing operation does, without the values: for each output
//                 item, the input item it copies (or -1 for padding). The tests apply it to the
//                 input values of every dtype and compare bit for bit, so one oracle serves all.
//   KJT layout    a keyed jagged tensor without its values: keys, batch size and lengths [F * B]
//                 (feature-major).
//
// Everything here is header-only, CPU-only and slow on purpose: plain loops over rows and
// entries, no fast paths. It throws std::logic_error on misuse (a bug in a test).
#ifndef TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
#define TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tensorkit::ref {

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

}  // namespace tensorkit::ref

#endif  // TENSORKIT_TESTS_REFERENCE_FEATURES_REFERENCE_H_
