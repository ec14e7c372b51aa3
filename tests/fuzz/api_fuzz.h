// Structure-aware fuzzing of the in-memory API: the fuzzer's bytes are decoded into shapes,
// indices, strides and a sequence of operations, and every result is checked against a plain
// recomputation. Shared by the libFuzzer targets (fuzz_sparse_api.cc, fuzz_pattern_views.cc) and
// by the ctest replay of their corpora (tests/api/fuzz_replay_test.cc). Bad inputs must end in
// tensorkit::Error; a wrong result calls FuzzCheckFailed, which aborts.
#ifndef TENSORKIT_TESTS_FUZZ_API_FUZZ_H_
#define TENSORKIT_TESTS_FUZZ_API_FUZZ_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit::fuzz {

[[noreturn]] inline void FuzzCheckFailed(const char* what, int line) {
  std::fprintf(stderr, "api fuzz: check failed at line %d: %s\n", line, what);
  std::abort();
}
#define TK_FUZZ_CHECK(cond) ((cond) ? (void)0 : ::tensorkit::fuzz::FuzzCheckFailed(#cond, __LINE__))

// Reads the fuzzer's bytes; past the end every read is 0.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint8_t U8() { return p_ < end_ ? *p_++ : 0; }
  int64_t I64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{U8()} << (8 * i);
    return static_cast<int64_t>(v);
  }
  // Mostly small values, now and then any int64 (the edges included).
  int64_t Dim() {
    const uint8_t tag = U8();
    if (tag < 200) return tag % 6;
    if (tag < 230) return static_cast<int64_t>(U8());
    if (tag < 245) return I64();
    static const int64_t edges[] = {std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(),
                                    int64_t{1} << 31,
                                    int64_t{1} << 32,
                                    int64_t{1} << 62,
                                    -1};
    return edges[U8() % 6];
  }
  bool done() const { return p_ >= end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Element count when small enough to recompute densely, else -1.
inline int64_t SmallVolume(const std::vector<int64_t>& shape, int64_t limit = 4096) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;  // whatever the others
  int64_t v = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (v > limit / d) return -1;
    v *= d;
  }
  return v;
}

// Entries as (index row, value) tuples, for comparing sets of entries.
inline std::vector<std::pair<std::vector<int64_t>, float>> Entries(const SparseTensor& st) {
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  const std::vector<float> val = st.values().ToVector<float>();
  std::vector<std::pair<std::vector<int64_t>, float>> out;
  const int r = st.rank();
  for (int64_t i = 0; i < st.nnz(); ++i) {
    out.emplace_back(std::vector<int64_t>(idx.begin() + i * r, idx.begin() + (i + 1) * r),
                     val[static_cast<size_t>(i)]);
  }
  return out;
}

// The dense C-order values of in-bounds entries, the last of repeated indices winning.
inline std::vector<float> NaiveDense(const SparseTensor& st, int64_t volume) {
  std::vector<float> d(static_cast<size_t>(volume), 0.0f);
  for (const auto& [row, v] : Entries(st)) {
    int64_t pos = 0;
    for (int a = 0; a < st.rank(); ++a) pos = pos * st.shape()[a] + row[a];
    d[static_cast<size_t>(pos)] = v;
  }
  return d;
}

// SparseTensor::Create, ValidateIndices, Reorder, Coalesce, ToDense, FromDense and Concat on
// fuzzed shapes and indices. Returns how far the input got: 0 refused by Create, 1 indices out of
// bounds, 2 sorted and coalesced, 3 also densified and concatenated, all checked.
inline int FuzzSparseApi(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const int rank = 1 + in.U8() % 4;
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  for (int64_t& d : shape) d = in.Dim();
  const int64_t nnz = in.U8() % 24;
  std::vector<int64_t> idx;
  std::vector<float> vals;
  for (int64_t i = 0; i < nnz; ++i) {
    for (int a = 0; a < rank; ++a) {
      const uint8_t tag = in.U8();
      const int64_t d = std::max<int64_t>(shape[static_cast<size_t>(a)], 1);
      // Mostly inside the shape, now and then anywhere.
      idx.push_back(tag < 240 ? static_cast<int64_t>(tag) % std::min<int64_t>(d, 256) : in.I64());
    }
    vals.push_back(static_cast<float>(static_cast<int>(in.U8()) - 128));
  }
  SparseTensor st;
  try {
    st =
        SparseTensor::Create(Tensor::FromVector(idx, {nnz, rank}), Tensor::FromVector(vals), shape);
  } catch (const Error&) {
    return 0;  // a negative dim, say
  }
  const bool valid = st.IndicesValid();
  bool threw = false;
  try {
    st.ValidateIndices();
  } catch (const Error&) {
    threw = true;
  }
  TK_FUZZ_CHECK(threw == !valid);
  // Duplicates are valid for IndicesValid only when unique: check bounds alone here.
  bool in_bounds = true;
  for (int64_t i = 0; i < nnz; ++i) {
    for (int a = 0; a < rank; ++a) {
      const int64_t v = idx[static_cast<size_t>(i * rank + a)];
      in_bounds = in_bounds && v >= 0 && v < shape[static_cast<size_t>(a)];
    }
  }
  std::vector<int> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  for (int a = rank - 1; a > 0; --a) std::swap(order[a], order[in.U8() % (a + 1)]);
  try {
    SparseTensor r = st;
    r.Reorder(order);
    TK_FUZZ_CHECK(in_bounds);  // Reorder checks bounds
    auto before = Entries(st), after = Entries(r);
    std::vector<std::pair<std::vector<int64_t>, float>> a = before, b = after;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    TK_FUZZ_CHECK(a == b);  // the same entries
    for (size_t i = 1; i < after.size(); ++i) {
      std::vector<int64_t> x, y;
      for (int ax : order) {
        x.push_back(after[i - 1].first[static_cast<size_t>(ax)]);
        y.push_back(after[i].first[static_cast<size_t>(ax)]);
      }
      TK_FUZZ_CHECK(x <= y);  // sorted in `order`
    }
  } catch (const Error&) {
    TK_FUZZ_CHECK(!in_bounds);
  }
  if (!in_bounds) return 1;
  SparseTensor c = st;
  c.Coalesce();
  TK_FUZZ_CHECK(c.IndicesValid());
  const int64_t volume = SmallVolume(shape);
  if (volume < 0) {
    // No dense form can exist when the count overflows; the conversion must say so.
    if (SmallVolume(shape, std::numeric_limits<int64_t>::max()) < 0) {
      bool refused = false;
      try {
        (void)st.ToDense();
      } catch (const Error&) {
        refused = true;
      }
      TK_FUZZ_CHECK(refused);
    }
    return 2;
  }
  // Coalesce sums repeats: compare with the dense sums.
  std::vector<float> sums(static_cast<size_t>(volume), 0.0f);
  for (const auto& [row, v] : Entries(st)) {
    int64_t pos = 0;
    for (int a = 0; a < rank; ++a) pos = pos * shape[static_cast<size_t>(a)] + row[a];
    sums[static_cast<size_t>(pos)] += v;
  }
  TK_FUZZ_CHECK(c.ToDense().ToVector<float>() == sums);
  TK_FUZZ_CHECK(st.ToDense().ToVector<float>() == NaiveDense(st, volume));
  const Tensor dense = c.ToDense();
  const SparseTensor back = SparseTensor::FromDense(dense);
  TK_FUZZ_CHECK(back.ToDense().ToVector<float>() == sums);
  const int axis = in.U8() % rank;
  SparseTensor shuffled = c;  // the same entries in another order
  std::reverse(order.begin(), order.end());
  shuffled.Reorder(order);
  try {
    const SparseTensor joined = SparseTensor::Concat({c, shuffled, c}, axis);
    const Tensor expect = Concatenate({dense, dense, dense}, axis);
    SparseTensor j = joined;
    TK_FUZZ_CHECK(j.ToDense().ToVector<float>() == expect.ToVector<float>());
  } catch (const Error&) {
    // Only a joined dim past int64 may refuse.
    TK_FUZZ_CHECK(shape[static_cast<size_t>(axis)] > std::numeric_limits<int64_t>::max() / 3);
  }
  return 3;
}

// Pattern views on fuzzed dims, strides and offsets, then a fuzzed sequence of view operations;
// every view's elements must be the storage elements its pattern addresses. Returns the number
// of non-empty views checked element by element.
inline int FuzzPatternViews(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const int rank = in.U8() % 5;
  std::vector<int64_t> dims(static_cast<size_t>(rank)), strides(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) {
    dims[static_cast<size_t>(a)] = in.Dim();
    const uint8_t tag = in.U8();
    strides[static_cast<size_t>(a)] =
        tag < 230 ? static_cast<int64_t>(tag % 13) - 6
                  : static_cast<int64_t>(static_cast<uint64_t>(in.Dim()) *
                                         (tag % 2 ? uint64_t{1} : ~uint64_t{0}));  // +-, wrapping
  }
  const int64_t offset = in.U8() < 240 ? in.U8() % 64 : in.I64();
  Pattern p;
  try {
    p = MakePattern(dims, strides, offset);
  } catch (const Error&) {
    return 0;
  }
  if (p.NumElements() > 4096) return 0;
  const int64_t lo = MinMemoryIndex(p), hi = MaxMemoryIndex(p);
  if (lo < 0 || hi > 1 << 16) return 0;  // not a pattern a small storage can hold
  int checked = 0;
  const int64_t elems = hi + 1;
  auto storage = Storage::Allocate(DType::kInt64, elems, Device::Cpu());
  std::iota(static_cast<int64_t*>(storage->data()), static_cast<int64_t*>(storage->data()) + elems,
            int64_t{0});
  Tensor t(storage, p, DType::kInt64);
  for (int step = 0; step < 6 && !in.done(); ++step) {
    try {
      const int n = std::max(t.NumAxes(), 1);
      const int axis = static_cast<int>(in.U8() % (n + 1)) - (in.U8() % 3 == 0 ? n : 0);
      switch (in.U8() % 9) {
        case 0:
          t = Slice(t, axis, in.Dim(), in.Dim(), in.Dim());
          break;
        case 1:
          t = Transpose(t, axis, static_cast<int>(in.U8() % n));
          break;
        case 2:
          t = Select(t, axis, in.Dim());
          break;
        case 3:
          t = Unsqueeze(t, axis);
          break;
        case 4:
          t = Squeeze(t, axis);
          break;
        case 5: {
          std::vector<int64_t> to(static_cast<size_t>(in.U8() % 4));
          for (int64_t& d : to) d = in.U8() % 7 == 0 ? -1 : in.Dim();
          if (auto v = View(t, to)) t = *v;
          break;
        }
        case 6:
          if (auto v = MergeAxes(t, axis, 1 + in.U8() % 3)) t = *v;
          break;
        case 7: {
          std::vector<int64_t> parts(static_cast<size_t>(1 + in.U8() % 3));
          for (int64_t& d : parts) d = in.U8() % 5 == 0 ? -1 : in.Dim();
          t = SplitAxis(t, axis, parts);
          break;
        }
        case 8: {
          std::vector<int> axes(static_cast<size_t>(t.NumAxes()));
          std::iota(axes.begin(), axes.end(), 0);
          for (int a = static_cast<int>(axes.size()) - 1; a > 0; --a) {
            std::swap(axes[a], axes[in.U8() % (a + 1)]);
          }
          t = Permute(t, axes);
          break;
        }
      }
    } catch (const Error&) {
    }
    // The view addresses what its pattern says, inside the storage.
    TK_FUZZ_CHECK(SharesStorage(t, Tensor(storage, p, DType::kInt64)));
    const Pattern& q = t.pattern();
    if (t.NumElements() == 0) continue;
    TK_FUZZ_CHECK(MinMemoryIndex(q) >= 0 && MaxMemoryIndex(q) < elems);
    const std::vector<int64_t> got = t.ToVector<int64_t>();
    const std::vector<int64_t> d = t.Dims(), s = t.Strides();
    std::vector<int64_t> at(d.size(), 0);
    for (size_t k = 0; k < got.size(); ++k) {
      int64_t mem = q.offset;
      for (size_t a = 0; a < d.size(); ++a) mem += at[a] * s[a];
      TK_FUZZ_CHECK(got[k] == mem);
      for (size_t a = d.size(); a-- > 0;) {
        if (++at[a] < d[a]) break;
        at[a] = 0;
      }
    }
    ++checked;
  }
  return checked;
}

}  // namespace tensorkit::fuzz

#endif  // TENSORKIT_TESTS_FUZZ_API_FUZZ_H_
