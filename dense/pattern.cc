#include "tensorkit/dense/pattern.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <sstream>
#include <unordered_set>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace {

int64_t AbsI(int64_t v) { return v < 0 ? -v : v; }

// Multiplies with an overflow check; returns false on overflow.
bool MulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// No element: some dim is 0 (tested without the product, which may overflow for a pattern that
// is still being validated).
bool HasZeroDim(const Pattern& p) {
  for (int r = 0; r < p.num_axes; ++r) {
    if (p.dims[r] == 0) return true;
  }
  return false;
}

// Note [exact overlap]
// ~~~~~~~~~~~~~~~~~~~~
// Two canonical patterns meet when x - y = delta has a solution with x an element of A, y one of
// B (both without their offsets) and delta the difference of the offsets. Axis dominance makes
// each a digit system: an element is i * s + r with s the top stride, i the top index and r an
// element of the lower axes, whose span is below s. Meet decides this by recursion on the top
// axes, never element by element:
//  - a pattern without axes is one point: membership is the greedy digit test (Contains);
//  - one axis each: a linear Diophantine equation in a box, solved by the extended gcd;
//  - equal top strides s: (i - j) * s must lie within the lower spans of delta, which leaves at
//    most two values of i - j, each a problem with one axis fewer on both sides;
//  - top strides s > t with t dividing s (how views of one tensor relate): B's top axis is cut
//    into a block of s-strided rows of s / t and a short remainder, giving equal top strides;
//  - otherwise the top blocks of the pattern with the larger top stride are visited, but only
//    those within the other pattern's range: two families of disjoint intervals meet in at most
//    as many pairs as they have intervals, so the work grows with outer blocks, not elements.
// A remainder of every stride's gcd that delta does not share rules the pair out at once.
using Wide = __int128;  // products and differences of memory-indexes never overflow it

// A canonical pattern without its offset, axes by increasing stride; span[k] is the largest
// element of the lowest k axes.
struct Box {
  std::array<int64_t, kMaxAxes> dims{}, strides{};
  std::array<Wide, kMaxAxes + 1> span{};
  // Sets axis k (the spans of the axes above k are left stale: callers use the lowest k+1 only).
  void SetAxis(int k, int64_t dim, int64_t stride) {
    dims[k] = dim;
    strides[k] = stride;
    span[k + 1] = span[k] + static_cast<Wide>(dim - 1) * stride;
  }
  static Box Of(const Pattern& c) {
    Box b;
    for (int k = 0; k < c.num_axes; ++k) b.SetAxis(k, c.dims[k], c.strides[k]);
    return b;
  }
};

Wide FloorDiv(Wide a, Wide b) { return a / b - ((a % b != 0) && (a < 0)); }  // b > 0
Wide CeilDiv(Wide a, Wide b) { return a / b + ((a % b != 0) && (a > 0)); }   // b > 0

// Whether v is an element of the lowest k axes of b: the digits are found greedily from the top.
bool Contains(const Box& b, int k, Wide v) {
  if (v < 0 || v > b.span[k]) return false;
  for (int q = k - 1; q >= 0; --q) {
    const Wide digit = v / b.strides[q];
    if (digit >= b.dims[q]) return false;
    v -= digit * b.strides[q];
  }
  return v == 0;
}

// Whether i * s - j * t = delta for some 0 <= i < da, 0 <= j < db (s, t > 0).
bool SolveLine(int64_t s, int64_t da, int64_t t, int64_t db, Wide delta) {
  Wide r0 = s, r1 = t, x0 = 1, x1 = 0;  // extended Euclid: r0 = s * x0 (mod t)
  while (r1 != 0) {
    const Wide q = r0 / r1;
    r0 -= q * r1;
    std::swap(r0, r1);
    x0 -= q * x1;
    std::swap(x0, x1);
  }
  const Wide g = r0;
  if (delta % g != 0) return false;
  const Wide tg = t / g, sg = s / g;
  Wide i0 = ((delta / g) % tg) * (x0 % tg) % tg;  // the least i solving the congruence
  if (i0 < 0) i0 += tg;
  const Wide j0 = (i0 * s - delta) / t;  // exact; then i = i0 + k * tg, j = j0 + k * sg
  const Wide lo = std::max(CeilDiv(-i0, tg), CeilDiv(-j0, sg));
  const Wide hi = std::min(FloorDiv(da - 1 - i0, tg), FloorDiv(db - 1 - j0, sg));
  return lo <= hi;
}

bool Meet(const Box& a, int ka, const Box& b, int kb, Wide delta);

// Equal top strides s: A's top axis (dim da) is axis ka-1 of a; B's top axis has dim db and
// stride s and sits above the lowest kb axes of b.
bool MeetEqualTops(const Box& a, int ka, const Box& b, int kb, int64_t db, Wide delta) {
  const int64_t s = a.strides[ka - 1], da = a.dims[ka - 1];
  // x - y = (i - j) * s + (x' - y') with x' - y' within [-span_b, span_a] of the lower axes.
  const Wide lo = std::max<Wide>(CeilDiv(delta - a.span[ka - 1], s), -(db - 1));
  const Wide hi = std::min<Wide>(FloorDiv(delta + b.span[kb], s), da - 1);
  for (Wide d = lo; d <= hi; ++d) {
    if (Meet(a, ka - 1, b, kb, delta - d * s)) return true;
  }
  return false;
}

// Whether x - y = delta for x in the lowest ka axes of a and y in the lowest kb axes of b.
bool Meet(const Box& a, int ka, const Box& b, int kb, Wide delta) {
  if (delta > a.span[ka] || -delta > b.span[kb]) return false;
  if (ka == 0) return Contains(b, kb, -delta);
  if (kb == 0) return Contains(a, ka, delta);
  int64_t g = 0;
  for (int q = 0; q < ka; ++q) g = std::gcd(g, a.strides[q]);
  for (int q = 0; q < kb; ++q) g = std::gcd(g, b.strides[q]);
  if (delta % g != 0) return false;
  const int64_t s = a.strides[ka - 1], t = b.strides[kb - 1];
  if (s < t) return Meet(b, kb, a, ka, -delta);
  const int64_t da = a.dims[ka - 1], db = b.dims[kb - 1];
  if (ka == 1 && kb == 1) return SolveLine(s, da, t, db, delta);
  if (s == t) return MeetEqualTops(a, ka, b, kb - 1, db, delta);
  // The top blocks i * s + (lower axes of A) that reach into B's range.
  const Wide lo = std::max<Wide>(CeilDiv(delta - a.span[ka - 1], s), 0);
  const Wide hi = std::min<Wide>(FloorDiv(delta + b.span[kb], s), da - 1);
  if (hi - lo >= 2 && s % t == 0) {
    // Then B's top axis is longer than q = s / t (else B would reach at most two blocks): its
    // indexes u * q + w form whole rows of q (stride s, as A's top) and a remainder.
    const int64_t q = s / t, rows = db / q, rest = db % q;
    Box rowed = b;
    rowed.SetAxis(kb - 1, q, t);
    if (rows > 0 && MeetEqualTops(a, ka, rowed, kb, rows, delta)) return true;
    if (rest == 0) return false;
    Box tail = b;
    tail.SetAxis(kb - 1, rest, t);
    return Meet(a, ka, tail, kb, delta + static_cast<Wide>(rows) * s);
  }
  for (Wide i = lo; i <= hi; ++i) {
    if (Meet(a, ka - 1, b, kb, delta - i * s)) return true;
  }
  return false;
}

// An ostringstream made on first use: WhyInvalid runs for every Tensor (views included) and
// must stay cheap when there is nothing to report.
class LazyMessage {
 public:
  template <typename T>
  LazyMessage& operator<<(const T& v) {
    if (!stream_) stream_ = std::make_unique<std::ostringstream>();
    *stream_ << v;
    return *this;
  }
  std::string str() const { return stream_ ? stream_->str() : std::string(); }

 private:
  std::unique_ptr<std::ostringstream> stream_;
};

}  // namespace

std::vector<int64_t> Pattern::Dims() const {
  std::vector<int64_t> v(num_axes);
  for (int a = 0; a < num_axes; ++a) v[a] = Dim(a);
  return v;
}

std::vector<int64_t> Pattern::Strides() const {
  std::vector<int64_t> v(num_axes);
  for (int a = 0; a < num_axes; ++a) v[a] = Stride(a);
  return v;
}

int64_t Pattern::NumElements() const {
  // A dim 0 anywhere makes the count 0 even when the other dims alone would overflow int64.
  if (HasZeroDim(*this)) return 0;
  int64_t n = 1;
  for (int r = 0; r < num_axes; ++r) n *= dims[r];
  return n;
}

bool Pattern::operator==(const Pattern& o) const {
  if (num_axes != o.num_axes || offset != o.offset) return false;
  for (int r = 0; r < num_axes; ++r) {
    if (dims[r] != o.dims[r] || strides[r] != o.strides[r]) return false;
  }
  return true;
}

std::string Pattern::ToString() const {
  std::ostringstream os;
  os << "offset=" << offset << " dims=" << ShapeString(Dims())
     << " strides=" << ShapeString(Strides());
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Pattern& p) { return os << p.ToString(); }

size_t Hash(const Pattern& p) {
  size_t h = std::hash<int64_t>()(p.offset) ^ (static_cast<size_t>(p.num_axes) << 56);
  for (int r = 0; r < p.num_axes; ++r) {
    h = h * 1000003u ^ std::hash<int64_t>()(p.dims[r]);
    h = h * 1000003u ^ std::hash<int64_t>()(p.strides[r]);
  }
  return h;
}

int NormalizeAxis(int axis, int num_axes, const char* op) {
  TK_CHECK(axis >= -num_axes && axis < num_axes, kOutOfRange, op, ": axis ", axis,
           " is out of range for a tensor with ", num_axes, " axes (valid: ", -num_axes, " to ",
           num_axes - 1, ")");
  return axis < 0 ? axis + num_axes : axis;
}

Pattern MakePattern(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                    int64_t offset, const char* op) {
  TK_CHECK(dims.size() == strides.size(), kInvalidArgument, op, ": dims ", ShapeString(dims),
           " and strides ", ShapeString(strides), " differ in length");
  TK_CHECK(dims.size() <= static_cast<size_t>(kMaxAxes), kInvalidArgument, op, ": ", dims.size(),
           " axes requested; at most ", kMaxAxes, " are supported");
  Pattern p;
  p.num_axes = static_cast<int>(dims.size());
  p.offset = offset;
  for (int a = 0; a < p.num_axes; ++a) {
    int r = p.num_axes - 1 - a;
    p.dims[r] = dims[a];
    p.strides[r] = dims[a] == 1 ? 0 : strides[a];
  }
  std::string why = WhyInvalid(p);
  TK_CHECK(why.empty(), kInvalidArgument, op, ": dims ", ShapeString(dims), " strides ",
           ShapeString(strides), " offset ", offset, " do not form a valid pattern: ", why);
  return p;
}

Pattern DefaultPattern(const std::vector<int64_t>& dims, const char* op) {
  TK_CHECK(dims.size() <= static_cast<size_t>(kMaxAxes), kInvalidArgument, op, ": ", dims.size(),
           " axes requested (dims ", ShapeString(dims), "); at most ", kMaxAxes, " are supported");
  Pattern p;
  p.num_axes = static_cast<int>(dims.size());
  for (int64_t d : dims) {
    TK_CHECK(d >= 0, kInvalidArgument, op, ": negative dim ", d, " in dims ", ShapeString(dims));
  }
  // A zero dim anywhere makes the count 0, however large the others (NumPy and TensorFlow
  // accept such shapes too).
  int64_t count = 0;
  TK_CHECK(ElementCount(dims, &count), kOutOfRange, op, ": dims ", ShapeString(dims),
           " have more elements than fit in int64");
  // The strides of an empty pattern address nothing: they stop growing at the first zero or
  // the first product that would overflow.
  int64_t stride = 1;
  bool frozen = false;
  for (int r = 0; r < p.num_axes; ++r) {
    const int64_t d = dims[p.num_axes - 1 - r];
    p.dims[r] = d;
    p.strides[r] = d == 1 ? 0 : stride;
    int64_t next = 0;
    frozen = frozen || d == 0 || !MulOk(stride, d, &next);
    if (!frozen) stride = next;
  }
  return p;
}

bool ElementCount(const std::vector<int64_t>& dims, int64_t* count) {
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    *count = 0;
    return true;
  }
  int64_t n = 1;
  for (int64_t d : dims) {
    if (!MulOk(n, d, &n)) return false;
  }
  *count = n;
  return true;
}

int64_t MinMemoryIndex(const Pattern& p) {
  int64_t m = p.offset;
  if (HasZeroDim(p)) return m;
  for (int r = 0; r < p.num_axes; ++r) m += std::min<int64_t>(0, p.strides[r] * (p.dims[r] - 1));
  return m;
}

int64_t MaxMemoryIndex(const Pattern& p) {
  int64_t m = p.offset;
  if (HasZeroDim(p)) return m;
  for (int r = 0; r < p.num_axes; ++r) m += std::max<int64_t>(0, p.strides[r] * (p.dims[r] - 1));
  return m;
}

std::string WhyInvalid(const Pattern& p) {
  LazyMessage os;  // no stream is built for valid patterns (checked on every view)
  if (p.num_axes < 0 || p.num_axes > kMaxAxes) {
    os << "num_axes " << p.num_axes << " is outside [0, " << kMaxAxes << "]";
    return os.str();
  }
  for (int r = p.num_axes; r < kMaxAxes; ++r) {
    if (p.dims[r] != 1 || p.strides[r] != 0) return "unused axes must have dim 1 and stride 0";
  }
  bool empty = false;
  for (int r = 0; r < p.num_axes; ++r) {
    if (p.dims[r] < 0) {
      os << "negative dim " << p.dims[r] << " on axis " << p.num_axes - 1 - r;
      return os.str();
    }
    if (p.dims[r] == 0) empty = true;
  }
  if (p.offset < 0) {
    os << "negative offset " << p.offset;
    return os.str();
  }
  if (empty) return "";
  // Spans must fit in int64 before anything else is computed from them.
  int64_t total = 0, upward = 0;  // all spans; those of positive strides
  for (int r = 0; r < p.num_axes; ++r) {
    int64_t span;
    // The lowest int64 has no absolute value; as a stride it reaches past int64 anyway.
    if (p.strides[r] == std::numeric_limits<int64_t>::min() ||
        !MulOk(AbsI(p.strides[r]), p.dims[r] - 1, &span) ||
        __builtin_add_overflow(total, span, &total)) {
      return "the strides reach memory-indexes that overflow int64";
    }
    if (p.strides[r] > 0) upward += span;  // <= total: cannot overflow
    if (p.dims[r] == 1 && p.strides[r] != 0) {
      os << "axis " << p.num_axes - 1 - r << " has dim 1 but stride " << p.strides[r]
         << " (must be 0)";
      return os.str();
    }
    if (p.dims[r] > 1 && p.strides[r] == 0) {
      os << "axis " << p.num_axes - 1 - r << " has dim " << p.dims[r]
         << " but stride 0 (broadcasting is done by operations, not views)";
      return os.str();
    }
  }
  int64_t reach = 0;  // the largest memory-index
  if (__builtin_add_overflow(p.offset, upward, &reach)) {
    return "the offset and the strides reach memory-indexes that overflow int64";
  }
  // Distinct memory-indexes in [0, 2^63) can still number 2^63 (dims [2^62 2], strides [2 1]).
  int64_t count = 1;
  for (int r = 0; r < p.num_axes; ++r) {
    if (!MulOk(count, p.dims[r], &count)) return "the element count overflows int64";
  }
  if (MinMemoryIndex(p) < 0) {
    os << "memory-index " << MinMemoryIndex(p) << " is negative";
    return os.str();
  }
  // Axis dominance over the non-trivial axes sorted by |stride|, in the form of the seed's
  // axis-dominance lemma: each |stride| exceeds the summed spans (dim-1)*|stride| of the axes
  // below it. That guarantees uniqueness (a difference on the highest differing axis cannot be
  // cancelled by the lower ones) and, unlike dim*|stride| <= next |stride|, it survives slicing
  // with a step: every other column of a [2 3] matrix (dims [2 2], strides [3 2]) stays valid.
  std::vector<std::pair<int64_t, int64_t>> axes;  // (|stride|, dim)
  for (int r = 0; r < p.num_axes; ++r) {
    if (p.dims[r] > 1) axes.emplace_back(AbsI(p.strides[r]), p.dims[r]);
  }
  std::sort(axes.begin(), axes.end());
  int64_t below = 0;  // spans of the axes before i; bounded by the total checked above
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0 && below >= axes[i].first) {
      os << "axis-dominance fails: the axes with |stride| below " << axes[i].first << " span "
         << below << " >= " << axes[i].first
         << " (two index tuples could share a memory-index; axis with |stride| "
         << axes[i - 1].first << " and dim " << axes[i - 1].second << ")";
      return os.str();
    }
    below += (axes[i].second - 1) * axes[i].first;
  }
  return "";
}

bool IsValid(const Pattern& p) { return WhyInvalid(p).empty(); }

Pattern Canonicalize(const Pattern& p) {
  Pattern c;
  if (p.NumElements() == 0) {
    c.num_axes = 1;
    c.dims[0] = 0;
    c.strides[0] = 1;
    return c;
  }
  c.offset = p.offset;
  std::vector<std::pair<int64_t, int64_t>> axes;  // (stride > 0, dim)
  for (int r = 0; r < p.num_axes; ++r) {
    if (p.dims[r] == 1) continue;
    int64_t s = p.strides[r];
    if (s < 0) {
      c.offset += s * (p.dims[r] - 1);
      s = -s;
    }
    axes.emplace_back(s, p.dims[r]);
  }
  std::sort(axes.begin(), axes.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& a : axes) {
    if (!merged.empty() && merged.back().first * merged.back().second == a.first) {
      merged.back().second *= a.second;
    } else {
      merged.push_back(a);
    }
  }
  c.num_axes = static_cast<int>(merged.size());
  for (int r = 0; r < c.num_axes; ++r) {
    c.strides[r] = merged[r].first;
    c.dims[r] = merged[r].second;
  }
  return c;
}

bool IsCompact(const Pattern& p) {
  Pattern c = Canonicalize(p);
  return c.num_axes == 0 || (c.num_axes == 1 && (c.strides[0] == 1 || c.dims[0] == 0));
}

bool HasDefaultStrides(const Pattern& p) {
  // Without elements there is no layout to disagree with, whatever the order of the axes.
  if (p.NumElements() == 0) return true;
  int64_t stride = 1;
  for (int r = 0; r < p.num_axes; ++r) {
    if (p.dims[r] != 1 && p.strides[r] != stride) return false;
    stride *= p.dims[r];
  }
  return true;
}

std::vector<int64_t> BroadcastDims(const std::vector<std::vector<int64_t>>& dims) {
  size_t n = 0;
  for (const auto& d : dims) n = std::max(n, d.size());
  std::vector<int64_t> out(n, 1);
  for (const auto& d : dims) {
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& o = out[n - d.size() + i];
      if (o == 1) o = d[i];
    }
  }
  return out;
}

bool Broadcastable(const Pattern& a, const Pattern& b) {
  for (int r = 0; r < kMaxAxes; ++r) {
    if (a.dims[r] != b.dims[r] && a.dims[r] != 1 && b.dims[r] != 1) return false;
  }
  return true;
}

bool Broadcastable(const Pattern& a, const Pattern& b, const Pattern& c) {
  return Broadcastable(a, b) && Broadcastable(a, c) && Broadcastable(b, c);
}

bool Overlap(const Pattern& a, const Pattern& b) {
  if (a.NumElements() == 0 || b.NumElements() == 0) return false;
  if (MaxMemoryIndex(a) < MinMemoryIndex(b) || MaxMemoryIndex(b) < MinMemoryIndex(a)) {
    return false;
  }
  const Pattern ca = Canonicalize(a), cb = Canonicalize(b);
  if (ca == cb) return true;
  return Meet(Box::Of(ca), ca.num_axes, Box::Of(cb), cb.num_axes,
              static_cast<Wide>(cb.offset) - ca.offset);
}

}  // namespace tensorkit
