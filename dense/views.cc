#include "tensorkit/dense/views.h"

#include <algorithm>
#include <utility>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace {

// A pattern spelled in the public numbering, easy to edit axis by axis.
struct Layout {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

Layout ToLayout(const Pattern& p) { return {p.Dims(), p.Strides(), p.offset}; }

// The view of t's storage with layout l. Dim-1 axes get stride 0 here so that callers need
// not care; the Tensor constructor re-checks validity and the storage range.
Tensor MakeView(const Tensor& t, const Layout& l) {
  Pattern p;
  p.num_axes = static_cast<int>(l.dims.size());
  p.offset = l.offset;
  for (int a = 0; a < p.num_axes; ++a) {
    const int r = p.num_axes - 1 - a;
    p.dims[r] = l.dims[a];
    p.strides[r] = l.dims[a] == 1 ? 0 : l.strides[a];
  }
  return t.WithPattern(p);
}

// Throws when the result of `op` would have more axes than a Pattern holds.
void CheckAxisCount(size_t num_axes, const char* op, const std::vector<int64_t>& dims) {
  TK_CHECK(num_axes <= static_cast<size_t>(kMaxAxes), kInvalidArgument, op, ": the result would ",
           "have ", num_axes, " axes (dims ", ShapeString(dims), "); at most ", kMaxAxes,
           " are supported");
}

// "axis 1 of dims [4 10]": where an index went wrong, for messages.
std::string AxisOf(int axis, const Tensor& t) {
  return "axis " + std::to_string(axis) + " of dims " + ShapeString(t.Dims());
}

// What `dims` must fill: axis `axis` of t, or all of t when axis < 0. Only built for messages.
std::string Whole(const Tensor& t, int axis) {
  return axis < 0 ? "the tensor with dims " + ShapeString(t.Dims()) : AxisOf(axis, t);
}

// How many elements some dims hold, for messages: the product, or a note that it overflows.
std::string HeldString(bool fits, int64_t product) {
  return fits ? std::to_string(product) : std::string("more than int64 holds");
}

// Replaces one -1 in `dims` by the value that makes the element count `count`; checks that
// every other entry is >= 0 and that the counts match. `count` is the size of Whole(t, axis).
std::vector<int64_t> ResolveDims(std::vector<int64_t> dims, int64_t count, const char* op,
                                 const Tensor& t, int axis) {
  int inferred = -1;
  int64_t known = 1;  // product of the given entries; meaningful when !overflow
  bool overflow = false, has_zero = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      TK_CHECK(inferred < 0, kInvalidArgument, op, ": dims ", ShapeString(dims),
               " contain more than one -1; at most one dim can be inferred");
      inferred = static_cast<int>(i);
      continue;
    }
    TK_CHECK(dims[i] >= 0, kInvalidArgument, op, ": negative dim ", dims[i], " in dims ",
             ShapeString(dims), " (only -1, meaning 'inferred', is allowed)");
    has_zero = has_zero || dims[i] == 0;
    overflow = overflow || __builtin_mul_overflow(known, dims[i], &known);
  }
  if (has_zero) known = 0;  // a zero wins over any overflow of the other factors
  const bool fits = has_zero || !overflow;
  if (inferred >= 0) {
    TK_CHECK(fits && known != 0 && count % known == 0, kShapeMismatch, op,
             ": cannot infer the -1 in dims ", ShapeString(dims), " from the ", count,
             " elements of ", Whole(t, axis), " (the other dims hold ", HeldString(fits, known),
             ")");
    dims[inferred] = count / known;
    return dims;
  }
  TK_CHECK(fits && known == count, kShapeMismatch, op, ": dims ", ShapeString(dims), " hold ",
           HeldString(fits, known), " elements but ", Whole(t, axis), " has ", count);
  return dims;
}

// A run of source axes that together step through memory with one stride, as a single axis
// of `count` elements would.
struct Chunk {
  int64_t count;
  int64_t stride;
};

// The chunks of a layout that has elements, innermost first. Dim-1 axes are skipped: they do
// not affect which memory-indexes appear in which order.
std::vector<Chunk> Chunks(const Layout& l) {
  std::vector<Chunk> chunks;
  int64_t next_stride = 0;  // the stride an axis needs to extend the current chunk outwards
  for (size_t i = l.dims.size(); i-- > 0;) {
    if (l.dims[i] == 1) continue;
    if (!chunks.empty() && l.strides[i] == next_stride) {
      chunks.back().count *= l.dims[i];
    } else {
      chunks.push_back({l.dims[i], l.strides[i]});
    }
    // On overflow no axis can continue the chunk: 0 matches no stride of a dim > 1.
    if (__builtin_mul_overflow(l.strides[i], l.dims[i], &next_stride)) next_stride = 0;
  }
  return chunks;
}

// The layout with `dims` (already resolved, same element count) listing the elements of `src`
// in the same C order, or nullopt. Each destination axis must fall inside one chunk.
std::optional<Layout> ViewLayout(const Layout& src, const std::vector<int64_t>& dims) {
  Layout dst{dims, std::vector<int64_t>(dims.size(), 0), src.offset};
  const bool empty = std::count(dims.begin(), dims.end(), int64_t{0}) > 0;
  if (empty) {
    // No element is reached, so any valid strides do: use C-order ones.
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      dst.strides[i] = stride;
      if (__builtin_mul_overflow(stride, std::max<int64_t>(dims[i], 1), &stride)) stride = 1;
    }
    return dst;
  }
  const std::vector<Chunk> chunks = Chunks(src);
  size_t c = 0;
  int64_t used = 1;  // elements of chunk c already covered by inner destination axes
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 1) continue;
    TK_INTERNAL_CHECK(c < chunks.size());  // the element counts agree
    dst.strides[i] = chunks[c].stride * used;
    used *= dims[i];
    if (chunks[c].count % used != 0) return std::nullopt;
    if (used == chunks[c].count) {
      ++c;
      used = 1;
    }
  }
  return dst;
}

}  // namespace

Tensor Slice(const Tensor& t, int axis, int64_t start, int64_t end, int64_t step) {
  t.CheckDefined("Slice");
  axis = NormalizeAxis(axis, t.NumAxes(), "Slice");
  const int64_t dim = t.Dim(axis);
  TK_CHECK(step != 0, kInvalidArgument, "Slice: step 0 is not allowed (", AxisOf(axis, t),
           "); use a positive step, or a negative one to walk the axis backwards");
  if (step > 0) {
    TK_CHECK(start >= 0 && start <= dim, kOutOfRange, "Slice: start ", start,
             " is out of range for ", AxisOf(axis, t), " (with step ", step, " it must be in [0, ",
             dim, "])");
    TK_CHECK(end >= start && end <= dim, kOutOfRange, "Slice: end ", end, " is out of range for ",
             AxisOf(axis, t), " (with start ", start, " and step ", step, " it must be in [", start,
             ", ", dim, "])");
  } else {
    TK_CHECK(start >= -1 && start <= dim - 1, kOutOfRange, "Slice: start ", start,
             " is out of range for ", AxisOf(axis, t), " (with negative step ", step,
             " it must be in [-1, ", dim - 1, "])");
    TK_CHECK(end >= -1 && end <= start, kOutOfRange, "Slice: end ", end, " is out of range for ",
             AxisOf(axis, t), " (with start ", start, " and negative step ", step,
             " it must be in [-1, ", start, "]; -1 means through index 0)");
  }
  // Unsigned arithmetic: |step| of INT64_MIN does not fit in int64.
  const uint64_t span = start <= end ? end - start : start - end;
  const uint64_t abs_step =
      step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const int64_t count = span == 0 ? 0 : static_cast<int64_t>(1 + (span - 1) / abs_step);

  Layout l = ToLayout(t.pattern());
  // With two or more elements stride*step is a real distance inside the storage, so it cannot
  // overflow; with fewer the stride is irrelevant (dim 1 gets 0 in MakeView). A tensor without
  // elements addresses nothing, and its strides may be anything: they are kept as they are.
  if (t.NumElements() > 0) {
    if (count > 0) l.offset += start * l.strides[axis];
    if (count >= 2) l.strides[axis] *= step;
  }
  l.dims[axis] = count;
  return MakeView(t, l);
}

Tensor Select(const Tensor& t, int axis, int64_t index) {
  t.CheckDefined("Select");
  axis = NormalizeAxis(axis, t.NumAxes(), "Select");
  TK_CHECK(index >= 0 && index < t.Dim(axis), kOutOfRange, "Select: index ", index,
           " is out of range for ", AxisOf(axis, t), " (valid: 0 to ", t.Dim(axis) - 1, ")");
  Layout l = ToLayout(t.pattern());
  if (t.NumElements() > 0) l.offset += index * l.strides[axis];  // empty: addresses nothing
  l.dims.erase(l.dims.begin() + axis);
  l.strides.erase(l.strides.begin() + axis);
  return MakeView(t, l);
}

Tensor Transpose(const Tensor& t, int axis1, int axis2) {
  t.CheckDefined("Transpose");
  axis1 = NormalizeAxis(axis1, t.NumAxes(), "Transpose");
  axis2 = NormalizeAxis(axis2, t.NumAxes(), "Transpose");
  Layout l = ToLayout(t.pattern());
  std::swap(l.dims[axis1], l.dims[axis2]);
  std::swap(l.strides[axis1], l.strides[axis2]);
  return MakeView(t, l);
}

Tensor Permute(const Tensor& t, const std::vector<int>& axes) {
  t.CheckDefined("Permute");
  const int n = t.NumAxes();
  TK_CHECK(static_cast<int>(axes.size()) == n, kInvalidArgument, "Permute: axes ",
           ShapeString(axes), " must list each of the ", n, " axes of dims ", ShapeString(t.Dims()),
           " exactly once");
  std::vector<bool> seen(n, false);
  const Layout src = ToLayout(t.pattern());
  Layout l = src;
  for (int i = 0; i < n; ++i) {
    TK_CHECK(axes[i] >= -n && axes[i] < n, kOutOfRange, "Permute: axis ", axes[i], " in axes ",
             ShapeString(axes), " is out of range for dims ", ShapeString(t.Dims()));
    const int a = axes[i] < 0 ? axes[i] + n : axes[i];
    TK_CHECK(!seen[a], kInvalidArgument, "Permute: axes ", ShapeString(axes),
             " is not a permutation: axis ", a, " appears twice");
    seen[a] = true;
    l.dims[i] = src.dims[a];
    l.strides[i] = src.strides[a];
  }
  return MakeView(t, l);
}

std::optional<Tensor> View(const Tensor& t, const std::vector<int64_t>& dims) {
  t.CheckDefined("View");
  CheckAxisCount(dims.size(), "View", dims);
  const std::vector<int64_t> resolved = ResolveDims(dims, t.NumElements(), "View", t, -1);
  std::optional<Layout> l = ViewLayout(ToLayout(t.pattern()), resolved);
  if (!l) return std::nullopt;
  return MakeView(t, *l);
}

std::optional<Tensor> MergeAxes(const Tensor& t, int axis1, int num_axes) {
  t.CheckDefined("MergeAxes");
  const int n = t.NumAxes();
  axis1 = NormalizeAxis(axis1, n, "MergeAxes");
  TK_CHECK(num_axes >= 1 && axis1 + num_axes <= n, kOutOfRange, "MergeAxes: cannot merge ",
           num_axes, " axes starting at axis ", axis1, " of dims ", ShapeString(t.Dims()),
           " (need 1 <= num_axes <= ", n - axis1, ")");
  if (num_axes == 1) return t;  // nothing to merge; keeps even an empty tensor's strides
  std::vector<int64_t> dims = t.Dims();
  int64_t merged = 1;
  bool overflow = false;
  for (int a = axis1; a < axis1 + num_axes; ++a) {
    overflow = overflow || __builtin_mul_overflow(merged, dims[a], &merged);
  }
  // Overflow needs huge dims next to a 0 (an empty tensor), and then the product is 0.
  if (overflow) merged = 0;
  dims.erase(dims.begin() + axis1 + 1, dims.begin() + axis1 + num_axes);
  dims[axis1] = merged;
  std::optional<Layout> l = ViewLayout(ToLayout(t.pattern()), dims);
  if (!l) return std::nullopt;
  return MakeView(t, *l);
}

Tensor SplitAxis(const Tensor& t, int axis, const std::vector<int64_t>& dims) {
  t.CheckDefined("SplitAxis");
  axis = NormalizeAxis(axis, t.NumAxes(), "SplitAxis");
  TK_CHECK(!dims.empty(), kInvalidArgument, "SplitAxis: dims must not be empty (splitting ",
           AxisOf(axis, t), ")");
  CheckAxisCount(t.NumAxes() - 1 + dims.size(), "SplitAxis", dims);
  const int64_t dim = t.Dim(axis);
  const std::vector<int64_t> parts = ResolveDims(dims, dim, "SplitAxis", t, axis);
  Layout l = ToLayout(t.pattern());
  const int64_t stride = l.strides[axis];
  // With elements, a part of dim > 1 steps by the product of the parts inside it: a real
  // distance in the storage, so it cannot overflow (a dim-1 part gets 0 and is not computed).
  // Without elements nothing is reached and any stride is valid.
  std::vector<int64_t> strides(parts.size(), 1);
  int64_t inner = 1;
  for (size_t i = parts.size(); t.NumElements() > 0 && i-- > 0;) {
    strides[i] = parts[i] > 1 ? stride * inner : 0;
    inner *= parts[i];
  }
  l.dims.erase(l.dims.begin() + axis);
  l.strides.erase(l.strides.begin() + axis);
  l.dims.insert(l.dims.begin() + axis, parts.begin(), parts.end());
  l.strides.insert(l.strides.begin() + axis, strides.begin(), strides.end());
  return MakeView(t, l);
}

Tensor Squeeze(const Tensor& t, int axis) {
  t.CheckDefined("Squeeze");
  axis = NormalizeAxis(axis, t.NumAxes(), "Squeeze");
  TK_CHECK(t.Dim(axis) == 1, kInvalidArgument, "Squeeze: ", AxisOf(axis, t), " has dim ",
           t.Dim(axis), "; only an axis of dim 1 can be removed (use Select to pick one index)");
  Layout l = ToLayout(t.pattern());
  l.dims.erase(l.dims.begin() + axis);
  l.strides.erase(l.strides.begin() + axis);
  return MakeView(t, l);
}

Tensor Unsqueeze(const Tensor& t, int axis) {
  t.CheckDefined("Unsqueeze");
  const int n = t.NumAxes();
  TK_CHECK(axis >= -(n + 1) && axis <= n, kOutOfRange, "Unsqueeze: axis ", axis,
           " is out of range for a tensor with ", n, " axes (valid: ", -(n + 1), " to ", n, ")");
  if (axis < 0) axis += n + 1;
  TK_CHECK(n < kMaxAxes, kInvalidArgument, "Unsqueeze: dims ", ShapeString(t.Dims()),
           " already have ", kMaxAxes, " axes, the most a tensor can have");
  Layout l = ToLayout(t.pattern());
  l.dims.insert(l.dims.begin() + axis, 1);
  l.strides.insert(l.strides.begin() + axis, 0);
  return MakeView(t, l);
}

Tensor SliceRows(const Tensor& t, int64_t start, int64_t end) {
  t.CheckDefined("SliceRows");
  TK_CHECK(t.NumAxes() >= 1, kInvalidArgument,
           "SliceRows: needs a tensor with at least one axis, got rank 0");
  const int64_t rows = t.Dim(0);
  TK_CHECK(start >= 0 && start <= rows, kOutOfRange, "SliceRows: start ", start,
           " is out of range for ", rows, " rows (dims ", ShapeString(t.Dims()), "; valid: 0 to ",
           rows, ")");
  TK_CHECK(end >= start && end <= rows, kOutOfRange, "SliceRows: end ", end,
           " is out of range for ", rows, " rows (dims ", ShapeString(t.Dims()), "; with start ",
           start, " valid: ", start, " to ", rows, ")");
  return Slice(t, 0, start, end);
}

std::optional<Tensor> Flatten(const Tensor& t) {
  t.CheckDefined("Flatten");
  return View(t, {t.NumElements()});
}

}  // namespace tensorkit
