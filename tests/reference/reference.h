// tests/reference/reference.h: a deliberately naive oracle for dense tensors, used by the tests.
//
// Glossary
//   index tuple   one integer per public axis, e.g. {2, 0, 5}; rank 0 has the empty tuple.
//   memory-index  offset + sum(index[i] * stride[i]), computed here from the public dims and
//                 strides one element at a time, with no fast path, so it can check the library.
//   C order       index tuples with the last axis varying fastest.
//   random view   a Tensor whose pattern was made by naive arithmetic on dims/strides/offset
//                 (slices with steps, negative strides, transposes, dim-0 and dim-1 axes), never
//                 by dense/views.h, so views.h can be tested against it.
//   broadcast     dims padded with 1 on the left; per axis all dims are equal or 1.
//   "output dim 1 means sum"  in an elementwise operation the iteration space is the broadcast
//                 of all operands INCLUDING the output; an output axis of dim 1 where the space
//                 has n > 1 receives the sum over that axis (the Kaldi seed's rule).
//
// Everything here is header-only, CPU-only and slow on purpose. It throws std::logic_error on
// misuse (that is a bug in a test, not a user error of tensorkit).
#ifndef TENSORKIT_TESTS_REFERENCE_REFERENCE_H_
#define TENSORKIT_TESTS_REFERENCE_REFERENCE_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorkit/dense/pattern.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit::ref {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

using Index = std::vector<int64_t>;
using Rng = std::mt19937_64;

// Product of dims (1 for rank 0).
int64_t NumElements(const std::vector<int64_t>& dims);
// Calls fn(const Index&) for every index tuple of `dims` in C order (once for rank 0, never
// when a dim is 0).
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& fn);
// The index tuple at C-order position `linear`, and back.
Index Unravel(const std::vector<int64_t>& dims, int64_t linear);
int64_t Ravel(const std::vector<int64_t>& dims, const Index& index);

// The memory-index of `index` in `p` (checks the index against the dims).
int64_t MemoryIndex(const Pattern& p, const Index& index);
// Reads / writes one element of a CPU tensor through storage + offset + strides. T must be the
// dtype's C type.
template <typename T>
T Get(const Tensor& t, const Index& index);
template <typename T>
void Set(const Tensor& t, const Index& index, T value);
// All elements in C order, read one by one with Get.
template <typename T>
std::vector<T> Elements(const Tensor& t);
// All memory-indexes in C order.
std::vector<int64_t> MemoryIndexes(const Pattern& p);

// A random value of type T: small integers (so sums stay exact), floats in [-4, 4) with a few
// bits only, random bools, short random strings.
template <typename T>
T RandomValue(Rng& rng);
// A new C-order tensor with random values.
template <typename T>
Tensor RandomTensor(Rng& rng, const std::vector<int64_t>& dims);
// Random dims: rank in [min_rank, max_rank], each dim in [0, max_dim] where 0 and 1 are
// deliberately common (`zero_ok` false keeps dims >= 1).
std::vector<int64_t> RandomDims(Rng& rng, int min_rank, int max_rank, int64_t max_dim,
                                bool zero_ok = true);

struct RandomViewOptions {
  int num_ops = 3;                // how many view steps to apply, each chosen at random
  bool allow_rank_change = true;  // also select (drops an axis) and insert dim-1 axes
  int max_axes = 6;               // never grow beyond this many axes
};
// A random view of `base` (shares its storage): `num_ops` random steps among slice with a
// random (possibly negative) step, transpose, select and inserting a dim-1 axis. Built by
// naive pattern arithmetic, not by dense/views.h. The result is always a valid pattern.
Tensor RandomView(Rng& rng, const Tensor& base, const RandomViewOptions& options = {});
// A tensor with exactly `dims` and random values but a random strided layout: a bigger random
// base tensor, axes permuted, stepped (possibly negatively) and offset. The result shares
// storage with nothing else.
template <typename T>
Tensor RandomStridedTensor(Rng& rng, const std::vector<int64_t>& dims);

// Broadcast dims of several operands (padded with 1 on the left); throws std::logic_error if
// they are not broadcastable.
std::vector<int64_t> BroadcastDims(const std::vector<std::vector<int64_t>>& dims);
// `dims` padded with 1 on the left to `rank` axes.
std::vector<int64_t> PadLeft(const std::vector<int64_t>& dims, size_t rank);
// The index into an operand with `dims` of iteration index `full` (dim-1 axes read index 0).
Index ProjectIndex(const std::vector<int64_t>& dims, const Index& full);

// The naive elementwise operation with broadcasting and "output dim 1 means sum":
//   out = alpha * S + beta * out    (beta == 0 never reads out, so NaN/garbage cannot leak)
// where S at each output index is the sum, over all iteration indexes that project onto it,
// of f(inputs...) with f called as f(const std::vector<Acc>& values) -> Acc. All operands
// have C type T; Acc (default: double for floating types, T otherwise) holds the sums.
template <typename T, typename Acc = std::conditional_t<std::is_integral_v<T>, T, double>,
          typename F>
void ElementwiseRef(const std::vector<Tensor>& inputs, const Tensor& out, F f, Acc alpha = 1,
                    Acc beta = 0);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace internal {
[[noreturn]] inline void Fail(const std::string& what) { throw std::logic_error("ref: " + what); }

// A pattern from public dims/strides; dim-1 axes get stride 0. Throws if invalid.
inline Pattern BuildPattern(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                            int64_t offset) {
  Pattern p;
  p.num_axes = static_cast<int>(dims.size());
  p.offset = offset;
  for (int a = 0; a < p.num_axes; ++a) {
    p.dims[p.num_axes - 1 - a] = dims[a];
    p.strides[p.num_axes - 1 - a] = dims[a] == 1 ? 0 : strides[a];
  }
  if (!IsValid(p)) Fail("built an invalid pattern " + p.ToString() + ": " + WhyInvalid(p));
  return p;
}

inline int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
}  // namespace internal

inline int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& fn) {
  const int64_t n = NumElements(dims);
  for (int64_t i = 0; i < n; ++i) fn(Unravel(dims, i));
}

inline Index Unravel(const std::vector<int64_t>& dims, int64_t linear) {
  Index index(dims.size());
  for (size_t a = dims.size(); a-- > 0;) {
    index[a] = linear % dims[a];
    linear /= dims[a];
  }
  return index;
}

inline int64_t Ravel(const std::vector<int64_t>& dims, const Index& index) {
  int64_t linear = 0;
  for (size_t a = 0; a < dims.size(); ++a) linear = linear * dims[a] + index[a];
  return linear;
}

inline int64_t MemoryIndex(const Pattern& p, const Index& index) {
  const std::vector<int64_t> dims = p.Dims(), strides = p.Strides();
  if (index.size() != dims.size()) {
    internal::Fail("index " + ShapeString(index) + " for dims " + ShapeString(dims));
  }
  int64_t m = p.offset;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (index[a] < 0 || index[a] >= dims[a]) {
      internal::Fail("index " + ShapeString(index) + " outside dims " + ShapeString(dims));
    }
    m += index[a] * strides[a];
  }
  return m;
}

inline std::vector<int64_t> MemoryIndexes(const Pattern& p) {
  std::vector<int64_t> out;
  ForEachIndex(p.Dims(), [&](const Index& i) { out.push_back(MemoryIndex(p, i)); });
  return out;
}

template <typename T>
T Get(const Tensor& t, const Index& index) {
  if (!t.device().is_cpu()) internal::Fail("Get needs a CPU tensor");
  if (DTypeOf<T> != t.dtype()) internal::Fail("Get: wrong C type");
  return static_cast<const T*>(t.storage()->data())[MemoryIndex(t.pattern(), index)];
}

template <typename T>
void Set(const Tensor& t, const Index& index, T value) {
  if (!t.device().is_cpu()) internal::Fail("Set needs a CPU tensor");
  if (DTypeOf<T> != t.dtype()) internal::Fail("Set: wrong C type");
  static_cast<T*>(t.storage()->data())[MemoryIndex(t.pattern(), index)] = std::move(value);
}

template <typename T>
std::vector<T> Elements(const Tensor& t) {
  std::vector<T> out;
  ForEachIndex(t.Dims(), [&](const Index& i) { out.push_back(Get<T>(t, i)); });
  return out;
}

template <typename T>
T RandomValue(Rng& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return internal::Uniform(rng, 0, 1) == 1;
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::string s(static_cast<size_t>(internal::Uniform(rng, 0, 6)), 'a');
    for (char& c : s) c = static_cast<char>('a' + internal::Uniform(rng, 0, 25));
    return s;
  } else if constexpr (std::is_integral_v<T>) {
    const int64_t lo = std::is_signed_v<T> ? -20 : 0;
    return static_cast<T>(internal::Uniform(rng, lo, 20));
  } else {
    // Multiples of 1/8 in [-4, 4): exact in every float type, including float16 and bfloat16.
    return static_cast<T>(static_cast<float>(internal::Uniform(rng, -32, 31)) / 8.0f);
  }
}

template <typename T>
Tensor RandomTensor(Rng& rng, const std::vector<int64_t>& dims) {
  std::vector<T> values;
  for (int64_t i = 0; i < NumElements(dims); ++i) values.push_back(RandomValue<T>(rng));
  return Tensor::FromVector(std::move(values), dims);
}

inline std::vector<int64_t> RandomDims(Rng& rng, int min_rank, int max_rank, int64_t max_dim,
                                       bool zero_ok) {
  std::vector<int64_t> dims(static_cast<size_t>(internal::Uniform(rng, min_rank, max_rank)));
  for (int64_t& d : dims) {
    const int64_t kind = internal::Uniform(rng, 0, 9);
    if (kind == 0 && zero_ok) {
      d = 0;
    } else if (kind <= 2) {
      d = 1;
    } else {
      d = internal::Uniform(rng, 1, max_dim);
    }
  }
  return dims;
}

inline Tensor RandomView(Rng& rng, const Tensor& base, const RandomViewOptions& options) {
  std::vector<int64_t> dims = base.Dims(), strides = base.Strides();
  int64_t offset = base.pattern().offset;
  for (int op = 0; op < options.num_ops; ++op) {
    const int n = static_cast<int>(dims.size());
    const int64_t kind = internal::Uniform(rng, 0, options.allow_rank_change ? 5 : 2);
    if (kind <= 1 && n > 0) {  // slice with a random step, maybe negative
      const int a = static_cast<int>(internal::Uniform(rng, 0, n - 1));
      const int64_t d = dims[a];
      if (d == 0) continue;
      int64_t lo = internal::Uniform(rng, 0, d - 1), hi = internal::Uniform(rng, 0, d - 1);
      if (lo > hi) std::swap(lo, hi);
      const int64_t step = internal::Uniform(rng, 1, 3) * (internal::Uniform(rng, 0, 1) ? -1 : 1);
      // Indexes lo..hi taken every |step|, starting from hi when the step is negative; an
      // empty range now and then.
      const bool empty = internal::Uniform(rng, 0, 7) == 0;
      const int64_t count = empty ? 0 : (hi - lo) / std::abs(step) + 1;
      const int64_t first = step > 0 ? lo : hi;
      if (count > 0) offset += first * strides[a];
      strides[a] = count >= 2 ? strides[a] * step : strides[a];
      dims[a] = count;
    } else if (kind == 2 && n >= 2) {  // transpose two axes
      const int a = static_cast<int>(internal::Uniform(rng, 0, n - 1));
      const int b = static_cast<int>(internal::Uniform(rng, 0, n - 1));
      std::swap(dims[a], dims[b]);
      std::swap(strides[a], strides[b]);
    } else if (kind == 3 && n > 0) {  // select one index, dropping the axis
      const int a = static_cast<int>(internal::Uniform(rng, 0, n - 1));
      if (dims[a] == 0) continue;
      offset += internal::Uniform(rng, 0, dims[a] - 1) * strides[a];
      dims.erase(dims.begin() + a);
      strides.erase(strides.begin() + a);
    } else if (kind >= 4 && n < options.max_axes) {  // insert a dim-1 axis
      const int a = static_cast<int>(internal::Uniform(rng, 0, n));
      dims.insert(dims.begin() + a, 1);
      strides.insert(strides.begin() + a, 0);
    }
  }
  return base.WithPattern(internal::BuildPattern(dims, strides, offset));
}

template <typename T>
Tensor RandomStridedTensor(Rng& rng, const std::vector<int64_t>& dims) {
  const size_t n = dims.size();
  // Each axis gets a step of magnitude 1..2 and a base dim with some slack beyond what the
  // step needs; the base axes are then laid out in a random order.
  std::vector<int64_t> steps(n), base_dims(n);
  for (size_t a = 0; a < n; ++a) {
    steps[a] = internal::Uniform(rng, 1, 2) * (internal::Uniform(rng, 0, 2) == 0 ? -1 : 1);
    const int64_t need = dims[a] == 0 ? 0 : (dims[a] - 1) * std::abs(steps[a]) + 1;
    base_dims[a] = need + internal::Uniform(rng, 0, 1);
  }
  std::vector<size_t> order(n);  // order[k] = which axis is k-th outermost in memory
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> base_strides(n);
  int64_t stride = 1;
  for (size_t k = n; k-- > 0;) {
    base_strides[order[k]] = stride;
    stride *= std::max<int64_t>(base_dims[order[k]], 1);
  }
  const int64_t storage = stride + internal::Uniform(rng, 0, 3);  // room for a random offset
  const int64_t shift = storage - stride;
  Tensor base = RandomTensor<T>(rng, {storage});
  std::vector<int64_t> strides(n);
  int64_t offset = internal::Uniform(rng, 0, shift);
  for (size_t a = 0; a < n; ++a) {
    strides[a] = base_strides[a] * steps[a];
    if (steps[a] < 0 && dims[a] > 0) offset += (dims[a] - 1) * base_strides[a] * -steps[a];
  }
  return base.WithPattern(internal::BuildPattern(dims, strides, offset));
}

inline std::vector<int64_t> PadLeft(const std::vector<int64_t>& dims, size_t rank) {
  if (dims.size() > rank) internal::Fail("PadLeft: more axes than the rank");
  std::vector<int64_t> out(rank - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

inline std::vector<int64_t> BroadcastDims(const std::vector<std::vector<int64_t>>& dims) {
  size_t rank = 0;
  for (const auto& d : dims) rank = std::max(rank, d.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& d : dims) {
    const std::vector<int64_t> p = PadLeft(d, rank);
    for (size_t a = 0; a < rank; ++a) {
      if (p[a] == out[a] || p[a] == 1) continue;
      if (out[a] != 1) internal::Fail("dims " + ShapeString(d) + " do not broadcast");
      out[a] = p[a];
    }
  }
  return out;
}

inline Index ProjectIndex(const std::vector<int64_t>& dims, const Index& full) {
  Index index(dims.size());
  const size_t pad = full.size() - dims.size();
  for (size_t a = 0; a < dims.size(); ++a) index[a] = dims[a] == 1 ? 0 : full[pad + a];
  return index;
}

template <typename T, typename Acc, typename F>
void ElementwiseRef(const std::vector<Tensor>& inputs, const Tensor& out, F f, Acc alpha,
                    Acc beta) {
  std::vector<std::vector<int64_t>> all_dims;
  for (const Tensor& t : inputs) all_dims.push_back(t.Dims());
  all_dims.push_back(out.Dims());
  const std::vector<int64_t> space = BroadcastDims(all_dims);
  const std::vector<int64_t> out_dims = out.Dims();
  std::vector<Acc> sums(static_cast<size_t>(NumElements(out_dims)), Acc{});
  std::vector<Acc> values(inputs.size());
  ForEachIndex(space, [&](const Index& i) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      values[k] = static_cast<Acc>(Get<T>(inputs[k], ProjectIndex(inputs[k].Dims(), i)));
    }
    sums[Ravel(out_dims, ProjectIndex(out_dims, i))] += f(values);
  });
  ForEachIndex(out_dims, [&](const Index& o) {
    Acc v = alpha * sums[Ravel(out_dims, o)];
    if (beta != Acc{}) v += beta * static_cast<Acc>(Get<T>(out, o));
    Set<T>(out, o, static_cast<T>(v));
  });
}

}  // namespace tensorkit::ref

#endif  // TENSORKIT_TESTS_REFERENCE_REFERENCE_H_
