// Sorting entries: the radix sorts behind Reorder and Coalesce (Note [field keys]) and behind
// ValidateIndices and the wide-key fallback (Note [packed keys]).
//
// Note [packed keys]: the key of a row is its linear index in the order's axis sequence
// (row[o0] * shape[o1] + row[o1]) * shape[o2] + ... which is < prod(shape). When key bits plus
// position bits fit in 64 (or 128) bits, each entry becomes one integer (key << pos_bits) | pos.
// An LSD radix sort over the key bits only is stable, and since positions start ascending the
// position bits never need a pass. Each pass counts digits per fixed chunk, turns the counts into
// offsets (digit-major, chunk-minor) and scatters every chunk in parallel; a pass whose digit is
// the same for every entry is skipped. Stable sorts have a unique result, so any thread count
// gives the same permutation.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>

#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace sparse_internal {
namespace {

__extension__ typedef unsigned __int128 Uint128;

// Bits needed to write every number below n (0 for n <= 1).
int BitsBelow(Uint128 n) {
  int bits = 0;
  while (bits < 128 && (Uint128{1} << bits) < n) ++bits;
  return bits;
}

// prod(shape[order[k]]) when it is below 2^127, else 0 ("does not fit").
Uint128 KeySpace(const std::vector<int64_t>& shape, const std::vector<int>& order) {
  Uint128 prod = 1;
  const Uint128 limit = Uint128{1} << 127;
  for (int a : order) {
    const Uint128 d = static_cast<Uint128>(shape[a]);
    if (d != 0 && prod > limit / d) return 0;
    prod *= d;
  }
  return prod;
}

// Packs entry i as (key << pos_bits) | i into E (uint64_t or Uint128).
template <typename E>
void PackKeys(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape,
              const std::vector<int>& order, int pos_bits, E* out) {
  const int rank = static_cast<int>(shape.size());
  ParallelFor(0, nnz, GrainFor(8 * rank + 16), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t* row = idx + i * rank;
      E key = 0;
      for (int k = 0; k < rank; ++k) {
        key = key * static_cast<E>(shape[order[k]]) + static_cast<E>(row[order[k]]);
      }
      out[i] = (key << pos_bits) | static_cast<E>(i);
    }
  });
}

// One stable counting pass on bits [shift, shift + width); returns false (and leaves dst
// untouched) when every entry has the same digit.
template <typename E>
bool RadixPass(const E* src, E* dst, int64_t n, int shift, int width, int64_t chunk) {
  const int64_t buckets = int64_t{1} << width;
  const E mask = static_cast<E>(buckets - 1);
  const int64_t num_chunks = NumChunks(n, chunk);
  std::vector<int64_t> offsets(static_cast<size_t>(num_chunks * buckets), 0);
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* h = offsets.data() + c * buckets;
    for (int64_t i = b; i < e; ++i) ++h[static_cast<int64_t>((src[i] >> shift) & mask)];
  });
  int64_t sum = 0;
  for (int64_t d = 0; d < buckets; ++d) {
    int64_t total = 0;
    for (int64_t c = 0; c < num_chunks; ++c) total += offsets[c * buckets + d];
    if (total == n) return false;  // one digit holds every entry
  }
  for (int64_t d = 0; d < buckets; ++d) {
    for (int64_t c = 0; c < num_chunks; ++c) {
      int64_t& slot = offsets[c * buckets + d];
      const int64_t count = slot;
      slot = sum;
      sum += count;
    }
  }
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* o = offsets.data() + c * buckets;
    for (int64_t i = b; i < e; ++i)
      dst[o[static_cast<int64_t>((src[i] >> shift) & mask)]++] = src[i];
  });
  return true;
}

// Digit width limit: 4096 buckets, a good balance of passes and scatter locality.
constexpr int kMaxDigitBits = 12;

// Number of LSD passes RadixSortBits makes over `bits` key bits.
int RadixPasses(int bits) { return (bits + kMaxDigitBits - 1) / kMaxDigitBits; }

// The one LSD radix loop: sorts n words stably by their bits [lo, lo + bits), ping-ponging
// between `src` and `tmp`; returns the buffer that holds the result (passes whose digit is the
// same for every word are skipped, so it may be either).
template <typename E>
E* RadixSortBits(E* src, E* tmp, int64_t n, int lo, int bits) {
  const int passes = RadixPasses(bits);
  const int width = passes > 0 ? (bits + passes - 1) / passes : 0;
  // Large chunks keep many entries per bucket in each scatter; the size depends only on n.
  const int64_t chunk = std::max<int64_t>(kChunk, (n + 31) / 32);
  for (int p = 0; p < passes; ++p) {
    const int shift = lo + p * width;
    const int w = std::min(width, lo + bits - shift);
    if (RadixPass(src, tmp, n, shift, w, chunk)) std::swap(src, tmp);
  }
  return src;
}

// Radix-sorts packed entries by their key bits and returns the positions (Note [packed keys]).
template <typename E>
std::vector<int64_t> RadixPermutation(const int64_t* idx, int64_t nnz,
                                      const std::vector<int64_t>& shape,
                                      const std::vector<int>& order, int key_bits, int pos_bits,
                                      int64_t* sorted_rows) {
  std::unique_ptr<E[]> a(new E[static_cast<size_t>(nnz)]);
  std::unique_ptr<E[]> b(new E[static_cast<size_t>(nnz)]);
  PackKeys(idx, nnz, shape, order, pos_bits, a.get());
  const E* sorted = RadixSortBits(a.get(), b.get(), nnz, pos_bits, key_bits);
  std::vector<int64_t> perm(static_cast<size_t>(nnz));
  const E pos_mask = (E{1} << pos_bits) - 1;
  const int rank = static_cast<int>(shape.size());
  ParallelFor(0, nnz, GrainFor(16 + 8 * rank), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) perm[i] = static_cast<int64_t>(sorted[i] & pos_mask);
    if (sorted_rows == nullptr) return;
    if constexpr (std::is_same_v<E, uint64_t>) {
      // Sequential decoding by division instead of a random-access gather of the rows.
      for (int64_t i = lo; i < hi; ++i) {
        uint64_t key = sorted[i] >> pos_bits;
        int64_t* out = sorted_rows + i * rank;
        for (int k = rank - 1; k > 0; --k) {
          const uint64_t d = static_cast<uint64_t>(shape[order[k]]);
          const uint64_t q = key / d;
          out[order[k]] = static_cast<int64_t>(key - q * d);
          key = q;
        }
        if (rank > 0) out[order[0]] = static_cast<int64_t>(key);
      }
    } else {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t* src = idx + perm[i] * rank;
        std::copy(src, src + rank, sorted_rows + i * rank);
      }
    }
  });
  return perm;
}

// Stable parallel merge sort of positions comparing rows, for keys too wide to pack.
std::vector<int64_t> MergePermutation(const int64_t* idx, int64_t nnz, int rank,
                                      const std::vector<int>& order) {
  auto less = [&](int64_t x, int64_t y) {
    const int64_t* rx = idx + x * rank;
    const int64_t* ry = idx + y * rank;
    for (int a : order) {
      if (rx[a] != ry[a]) return rx[a] < ry[a];
    }
    return false;
  };
  std::vector<int64_t> perm(static_cast<size_t>(nnz));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  const int64_t run = std::max<int64_t>(4096, (nnz + 63) / 64);
  ParallelChunks(nnz, run, [&](int64_t, int64_t b, int64_t e) {
    std::stable_sort(perm.begin() + b, perm.begin() + e, less);
  });
  std::vector<int64_t> tmp(static_cast<size_t>(nnz));
  for (int64_t width = run; width < nnz; width *= 2) {
    ParallelChunks(nnz, 2 * width, [&](int64_t, int64_t b, int64_t e) {
      const int64_t mid = std::min(e, b + width);
      std::merge(perm.begin() + b, perm.begin() + mid, perm.begin() + mid, perm.begin() + e,
                 tmp.begin() + b, less);  // takes from the left run first on ties: stable
    });
    perm.swap(tmp);
  }
  return perm;
}

// ---- Note [field keys] ----------------------------------------------------------------------
// Reorder and Coalesce need the sorted rows and the values moved with them, not a permutation.
// When each axis gets its own bit field (BitsBelow(shape[a]) bits, order[0] highest) and the
// fields plus the position bits fit 64, one uint64 per entry carries everything: packing checks
// the bounds in the same read of the rows, the radix passes sort only the key bits (stable by
// construction, so thread-count independent), and one last sequential pass decodes each row
// with shifts and masks and fetches its value by the position bits. The two key arrays live in
// the output rows' buffer when it is large enough (rank >= 2), so the sort allocates nothing
// besides the outputs; the decode then runs in phases so that no row overwrites an unread key.

// Rows of at most this many entries are decoded sequentially (the tail of the phase sequence).
constexpr int64_t kSequentialDecode = 4096;

// Where each axis's field sits in an entry word, from the shape and the order.
struct FieldLayout {
  std::vector<int> shift;      // by axis
  std::vector<uint64_t> mask;  // by axis
  int key_bits = 0;
  int pos_bits = 0;
};

FieldLayout MakeFieldLayout(const std::vector<int64_t>& shape, const std::vector<int>& order,
                            int64_t nnz) {
  FieldLayout f;
  const int rank = static_cast<int>(shape.size());
  f.shift.assign(static_cast<size_t>(rank), 0);
  f.mask.assign(static_cast<size_t>(rank), 0);
  f.pos_bits = BitsBelow(static_cast<Uint128>(nnz));
  int bits = f.pos_bits;
  for (int k = rank - 1; k >= 0; --k) {  // the last order axis sits just above the position
    const int a = order[k];
    const int w = BitsBelow(static_cast<Uint128>(std::max<int64_t>(shape[a], 0)));
    f.shift[a] = w == 0 ? 0 : std::min(bits, 63);  // an empty field never shifts
    f.mask[a] = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    bits += w;
    if (bits > 128) bits = 128;  // saturate: "does not fit" is all that matters then
  }
  f.key_bits = bits - f.pos_bits;
  return f;
}

// Packs entry i as its fields | i; returns the first entry outside `shape`, or -1 (the bounds
// test is fused into the packing pass, so the rows are read once for both jobs).
template <int kRank>
int64_t PackFields(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape,
                   const FieldLayout& f, uint64_t* out) {
  const int r = kRank > 0 ? kRank : static_cast<int>(shape.size());
  const int* shift = f.shift.data();
  const int64_t* dims = shape.data();
  return FirstFailure(
      nnz,
      [&](int64_t b, int64_t e) {
        bool any = false;
        for (int64_t i = b; i < e; ++i) {
          const int64_t* row = idx + i * r;
          uint64_t word = static_cast<uint64_t>(i);
          for (int a = 0; a < r; ++a) {
            const uint64_t v = static_cast<uint64_t>(row[a]);
            any |= v >= static_cast<uint64_t>(dims[a]);
            word |= v << shift[a];
          }
          out[i] = word;
        }
        return !any;
      },
      [&](int64_t i) { return OutOfBounds(idx + i * r, dims, r); });
}

// Decodes sorted words [lo, hi) into rows and gathers their values; `reverse` walks backwards
// (needed where rows may overwrite later words of the same range).
template <int kRank, typename T>
void DecodeRange(const uint64_t* words, int64_t lo, int64_t hi, bool reverse, const FieldLayout& f,
                 int rank, const T* src, T* dst, bool may_move, int64_t* rows) {
  const int r = kRank > 0 ? kRank : rank;
  const uint64_t pos_mask = (uint64_t{1} << f.pos_bits) - 1;
  const int* shift = f.shift.data();
  const uint64_t* mask = f.mask.data();
  auto one = [&](int64_t i) {
    const uint64_t w = words[i];  // read before the row write, which may cover it
    const int64_t pos = static_cast<int64_t>(w & pos_mask);
    int64_t* out = rows + i * r;
    for (int a = 0; a < r; ++a) out[a] = static_cast<int64_t>((w >> shift[a]) & mask[a]);
    if constexpr (std::is_same_v<T, std::string>) {
      if (may_move) {
        dst[i] = std::move(const_cast<T*>(src)[pos]);
        return;
      }
    }
    dst[i] = src[pos];
  };
  if (reverse) {
    for (int64_t i = hi - 1; i >= lo; --i) one(i);
    return;
  }
  constexpr int64_t kAhead = 16;  // prefetch the value of a later entry: random reads overlap
  for (int64_t i = lo; i < hi; ++i) {
    if (i + kAhead < hi) __builtin_prefetch(src + (words[i + kAhead] & pos_mask));
    one(i);
  }
}

// Decodes every word; when `words` aliases `rows`, row i covers words [rank*i, rank*i + rank),
// all at or after i, so ranges [lo, hi) with rank*lo >= hi run in parallel from the top down and
// the small rest runs backwards.
template <int kRank, typename T>
void DecodeAll(const uint64_t* words, int64_t n, const FieldLayout& f, int rank, bool aliased,
               const T* src, T* dst, bool may_move, int64_t* rows) {
  const int64_t grain = GrainFor(8 * (rank + 1) + static_cast<int64_t>(sizeof(T)));
  int64_t hi = n;
  while (hi > 0) {
    const int64_t lo = aliased ? (hi + rank - 1) / rank : 0;
    if (aliased && (lo == hi || hi <= kSequentialDecode)) {
      DecodeRange<kRank>(words, 0, hi, /*reverse=*/true, f, rank, src, dst, may_move, rows);
      return;
    }
    ParallelFor(lo, hi, grain, [&](int64_t b, int64_t e) {
      DecodeRange<kRank>(words, b, e, /*reverse=*/false, f, rank, src, dst, may_move, rows);
    });
    hi = lo;
  }
}

template <typename T>
void DecodeDispatch(const uint64_t* words, int64_t n, const FieldLayout& f, int rank, bool aliased,
                    const T* src, T* dst, bool may_move, int64_t* rows) {
  switch (rank) {
    case 2:
      return DecodeAll<2>(words, n, f, rank, aliased, src, dst, may_move, rows);
    case 3:
      return DecodeAll<3>(words, n, f, rank, aliased, src, dst, may_move, rows);
    case 4:
      return DecodeAll<4>(words, n, f, rank, aliased, src, dst, may_move, rows);
    default:
      return DecodeAll<0>(words, n, f, rank, aliased, src, dst, may_move, rows);
  }
}

int64_t PackDispatch(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape,
                     const FieldLayout& f, uint64_t* out) {
  switch (shape.size()) {
    case 2:
      return PackFields<2>(idx, nnz, shape, f, out);
    case 3:
      return PackFields<3>(idx, nnz, shape, f, out);
    case 4:
      return PackFields<4>(idx, nnz, shape, f, out);
    default:
      return PackFields<0>(idx, nnz, shape, f, out);
  }
}

// Note [field keys]; the caller checked that key_bits + pos_bits <= 64.
Tensor SortFields(const char* op, const int64_t* idx, int64_t nnz,
                  const std::vector<int64_t>& shape, const FieldLayout& f, const Tensor& values,
                  bool may_move, int64_t* sorted_rows) {
  const int rank = static_cast<int>(shape.size());
  std::shared_ptr<Storage> own;  // scratch when the rows' buffer is too small
  const bool aliased = rank >= 2;
  uint64_t* scratch = reinterpret_cast<uint64_t*>(sorted_rows);
  if (!aliased) {
    own = Storage::Allocate(DType::kInt64, 2 * nnz, Device::Cpu());
    scratch = static_cast<uint64_t*>(own->data());
  }
  // Pack where an unskipped pass sequence ends in scratch[0, nnz).
  const bool odd = RadixPasses(f.key_bits) % 2 != 0;
  uint64_t* src = scratch + (odd ? nnz : 0);
  uint64_t* dst = scratch + (odd ? 0 : nnz);
  const int64_t bad = PackDispatch(idx, nnz, shape, f, src);
  if (bad >= 0) ThrowOutOfBounds(op, idx, bad, shape);
  src = RadixSortBits(src, dst, nnz, f.pos_bits, f.key_bits);
  if (src != scratch) {  // a skipped pass left the words in the upper half
    ParallelFor(0, nnz, GrainFor(16),
                [&](int64_t b, int64_t e) { std::copy(src + b, src + e, scratch + b); });
  }
  Tensor out = Tensor::Empty({nnz}, values.dtype());
  Dispatch(values.dtype(), op, [&]<typename T>() {
    DecodeDispatch<T>(scratch, nnz, f, rank, aliased, values.data<T>(), out.data<T>(), may_move,
                      sorted_rows);
  });
  return out;
}

}  // namespace

}  // namespace sparse_internal

// index_rows.h's sorts, built on the radix passes above.
namespace sparse_rows {
namespace si = sparse_internal;

Tensor SortEntries(const char* op, const int64_t* idx, int64_t nnz,
                   const std::vector<int64_t>& shape, const std::vector<int>& order,
                   const Tensor& values, bool may_move, int64_t* sorted_rows) {
  if (nnz > 1) {
    const si::FieldLayout f = si::MakeFieldLayout(shape, order, nnz);
    if (f.key_bits + f.pos_bits <= 64) {
      return si::SortFields(op, idx, nnz, shape, f, values, may_move, sorted_rows);
    }
  }
  CheckBounds(op, idx, nnz, shape);
  const std::vector<int64_t> perm = SortPermutation(idx, nnz, shape, order, sorted_rows);
  return si::GatherValues(values, perm.data(), nnz, may_move);
}

std::vector<int64_t> SortPermutation(const int64_t* idx, int64_t nnz,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int>& order, int64_t* sorted_rows) {
  const int rank = static_cast<int>(shape.size());
  if (nnz <= 1) {
    if (sorted_rows != nullptr && nnz * rank > 0) std::copy(idx, idx + nnz * rank, sorted_rows);
    return std::vector<int64_t>(static_cast<size_t>(nnz), 0);
  }
  const si::Uint128 space = si::KeySpace(shape, order);
  const int key_bits = space == 0 ? 129 : si::BitsBelow(space);
  const int pos_bits = si::BitsBelow(static_cast<si::Uint128>(nnz));
  if (key_bits + pos_bits <= 64) {
    return si::RadixPermutation<uint64_t>(idx, nnz, shape, order, key_bits, pos_bits, sorted_rows);
  }
  if (key_bits + pos_bits <= 128) {
    return si::RadixPermutation<si::Uint128>(idx, nnz, shape, order, key_bits, pos_bits,
                                             sorted_rows);
  }
  std::vector<int64_t> perm = si::MergePermutation(idx, nnz, rank, order);
  if (sorted_rows != nullptr) {
    ParallelFor(0, nnz, GrainFor(8 * rank + 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        std::copy(idx + perm[i] * rank, idx + perm[i] * rank + rank, sorted_rows + i * rank);
      }
    });
  }
  return perm;
}

namespace {

// Slices at most this long are sorted by insertion (they are the common case).
constexpr int64_t kInsertionSortMax = 32;

// Reused buffers of one task of SortSlices.
template <typename T>
struct SliceScratch {
  std::vector<uint64_t> keys;
  std::vector<int64_t> perm;
  std::vector<int64_t> minor;
  std::vector<T> values;
};

// Stable sort of one slice by minor key, moving the values along. Long slices sort (minor,
// position) words when both fit 32 bits (unique keys: the stable order), else positions.
template <typename T>
void SortSlice(int64_t* minor, T* vals, int64_t len, SliceScratch<T>* s) {
  if (std::is_sorted(minor, minor + len)) return;
  if (len <= kInsertionSortMax) {
    for (int64_t i = 1; i < len; ++i) {
      const int64_t m = minor[i];
      T v = std::move(vals[i]);
      int64_t j = i;
      for (; j > 0 && minor[j - 1] > m; --j) {
        minor[j] = minor[j - 1];
        vals[j] = std::move(vals[j - 1]);
      }
      minor[j] = m;
      vals[j] = std::move(v);
    }
    return;
  }
  s->perm.resize(static_cast<size_t>(len));
  const int64_t top = *std::max_element(minor, minor + len);
  if (top <= int64_t{UINT32_MAX} && len <= int64_t{UINT32_MAX}) {
    s->keys.resize(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) s->keys[i] = static_cast<uint64_t>(minor[i]) << 32 | i;
    std::sort(s->keys.begin(), s->keys.end());
    for (int64_t i = 0; i < len; ++i) s->perm[i] = static_cast<int64_t>(s->keys[i] & 0xffffffffu);
  } else {
    std::iota(s->perm.begin(), s->perm.end(), int64_t{0});
    std::stable_sort(s->perm.begin(), s->perm.end(),
                     [&](int64_t x, int64_t y) { return minor[x] < minor[y]; });
  }
  s->minor.assign(minor, minor + len);
  s->values.resize(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) s->values[i] = std::move(vals[i]);
  for (int64_t i = 0; i < len; ++i) {
    minor[i] = s->minor[s->perm[i]];
    vals[i] = std::move(s->values[s->perm[i]]);
  }
}

}  // namespace

template <typename T>
void SortSlices(const int64_t* ptr, int64_t num_slices, int64_t* minor, T* values) {
  const int64_t nnz = ptr[num_slices] - ptr[0];
  const int64_t grain = GrainFor(16 * (nnz / std::max<int64_t>(num_slices, 1) + 1));
  ParallelFor(0, num_slices, grain, [&](int64_t b, int64_t e) {
    SliceScratch<T> scratch;
    for (int64_t r = b; r < e; ++r) {
      SortSlice<T>(minor + ptr[r], values + ptr[r], ptr[r + 1] - ptr[r], &scratch);
    }
  });
}

#define TK_SORT_SLICES(e, t, n) template void SortSlices<t>(const int64_t*, int64_t, int64_t*, t*);
TENSORKIT_DTYPES(TK_SORT_SLICES)
#undef TK_SORT_SLICES

}  // namespace sparse_rows

namespace si = sparse_internal;

namespace {

// True when moving strings out of `host` cannot be seen through another handle: it is a private
// copy of `original`, or `original` is its only other owner.
bool MayMove(const Tensor& host, const Tensor& original) {
  if (host.dtype() != DType::kString) return false;
  if (!SharesStorage(host, original)) return true;
  return host.storage().use_count() == 2;
}

// Sum of values[b..e) in entry order (AddW: OR for bool, wrapping integers, the compute type
// for 16-bit floats); for strings the last one (moved: the values are a private sorted copy).
template <typename T>
T ReduceRun(T* values, int64_t b, int64_t e) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::move(values[e - 1]);
  } else {
    using C = ComputeType<T>;
    C sum = static_cast<C>(values[b]);
    for (int64_t i = b + 1; i < e; ++i) sum = AddW(sum, static_cast<C>(values[i]));
    return static_cast<T>(sum);
  }
}

}  // namespace

void SparseTensor::Reorder(const std::vector<int>& order) {
  si::CheckCreated(*this, "Reorder");
  TK_CHECK(si::IsPermutation(order, rank()), kInvalidArgument, "Reorder: order ",
           ShapeString(order), " must be a permutation of all ", rank(), " axes 0..", rank() - 1,
           " of shape ", ShapeString(shape_));
  if (OnCuda(*this)) {
    *this = sparse_cuda::Reorder(*this, order);  // the tensor changes only once all succeeded
    return;
  }
  Tensor idx = indices_.HostContiguous();
  Tensor vals = values_.HostContiguous();
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  Tensor new_indices = Tensor::Empty({nnz(), rank()}, DType::kInt64);
  Tensor new_values =
      si::SortEntries("Reorder", rows, nnz(), shape_, order, vals, MayMove(vals, values_),
                      static_cast<int64_t*>(new_indices.raw_data()));
  indices_ = std::move(new_indices);
  values_ = std::move(new_values);
  order_ = order;
}

void SparseTensor::Coalesce() {
  si::CheckCreated(*this, "Coalesce");
  if (OnCuda(*this)) {  // the same steps on the device: sort, then merge the runs
    *this = sparse_cuda::Coalesce(*this);
    return;
  }
  const int r = rank();
  Tensor idx = indices_.HostContiguous();
  Tensor vals = values_.HostContiguous();
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  const int64_t n = nnz();
  const std::vector<int> order = si::Iota(r);
  // Rows and values in sorted sequence, so that everything after reads memory in sequence.
  Tensor sorted_indices = Tensor::Empty({n, r}, DType::kInt64);
  Tensor sorted_values =
      si::SortEntries("Coalesce", rows, n, shape_, order, vals, MayMove(vals, values_),
                      static_cast<int64_t*>(sorted_indices.raw_data()));
  const int64_t* srows = static_cast<const int64_t*>(sorted_indices.raw_data());
  // Runs of equal rows are adjacent now; each head starts one output entry.
  std::vector<int64_t> heads = si::SelectPositions(
      n, [&](int64_t i) { return i == 0 || !si::SameRow(srows + i * r, srows + (i - 1) * r, r); });
  const int64_t m = static_cast<int64_t>(heads.size());
  if (m == n) {  // no repeats
    indices_ = std::move(sorted_indices);
    values_ = std::move(sorted_values);
    order_ = order;
    return;
  }
  Tensor new_indices = si::GatherRows(srows, r, heads.data(), m);
  Tensor new_values = Tensor::Empty({m}, vals.dtype());
  Dispatch(vals.dtype(), "Coalesce", [&]<typename T>() {
    T* src = sorted_values.data<T>();
    T* dst = new_values.data<T>();
    ParallelFor(0, m, GrainFor(64), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        dst[j] = ReduceRun(src, heads[j], j + 1 < m ? heads[j + 1] : n);
      }
    });
  });
  indices_ = std::move(new_indices);
  values_ = std::move(new_values);
  order_ = order;
}

}  // namespace tensorkit
