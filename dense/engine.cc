#include "tensorkit/dense/engine.h"

#include <cstdlib>
#include <sstream>
#include <utility>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace engine {
namespace {

// One axis of a nest under construction.
struct Axis {
  int64_t dim = 1;
  std::array<int64_t, kMaxOperands> strides{};
};

// Whether axis b should be inside (closer to the inner loop than) axis a: the first operand
// whose strides on both axes are nonzero and differ decides (see Note [kernel engine]).
bool ShouldBeInner(const Axis& a, const Axis& b, int num_operands) {
  for (int o = 0; o < num_operands; ++o) {
    const int64_t sa = std::abs(a.strides[o]), sb = std::abs(b.strides[o]);
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sb < sa;
  }
  return false;
}

}  // namespace

bool LoopNest::Sums() const {
  for (int a = 0; a < num_axes; ++a) {
    if (dims[a] > 1 && strides[0][a] == 0) return true;
  }
  return false;
}

int64_t LoopNest::NumTuples() const {
  if (empty) return 0;
  int64_t n = 1;
  for (int a = 0; a < num_axes; ++a) n *= dims[a];
  return n;
}

std::string LoopNest::ToString() const {
  std::ostringstream os;
  os << "nest dims=[";
  for (int a = 0; a < num_axes; ++a) os << (a ? " " : "") << dims[a];
  os << "]";
  for (int o = 0; o < num_operands; ++o) {
    os << " op" << o << "(offset=" << offsets[o] << " strides=[";
    for (int a = 0; a < num_axes; ++a) os << (a ? " " : "") << strides[o][a];
    os << "])";
  }
  if (empty) os << " empty";
  return os.str();
}

LoopNest MakeLoopNest(const Pattern* const* patterns, int n) {
  TK_INTERNAL_CHECK(n >= 1 && n <= kMaxOperands);
  LoopNest nest;
  nest.num_operands = n;
  for (int o = 0; o < n; ++o) nest.offsets[o] = patterns[o]->offset;
  std::array<Axis, kMaxAxes> axes;
  int na = 0;
  for (int r = 0; r < kMaxAxes; ++r) {
    Axis ax;
    for (int o = 0; o < n; ++o) {
      if (patterns[o]->dims[r] != 1) ax.dim = patterns[o]->dims[r];
      ax.strides[o] = patterns[o]->strides[r];
    }
    if (ax.dim == 0) nest.empty = true;
    if (ax.dim == 1) continue;
    for (int o = 0; o < n; ++o) {
      if (patterns[o]->dims[r] == 1) ax.strides[o] = 0;
    }
    axes[na++] = ax;
  }
  if (nest.empty) return nest;
  // Flip axes on which the leading nonzero stride is negative, so fast paths see +1.
  for (int a = 0; a < na; ++a) {
    int lead = 0;
    while (lead < n && axes[a].strides[lead] == 0) ++lead;
    if (lead == n || axes[a].strides[lead] > 0) continue;
    for (int o = 0; o < n; ++o) {
      nest.offsets[o] += axes[a].strides[o] * (axes[a].dim - 1);
      axes[a].strides[o] = -axes[a].strides[o];
    }
  }
  // Order innermost first (insertion sort: the comparison is not a strict weak order).
  for (int i = 1; i < na; ++i) {
    for (int j = i; j > 0 && ShouldBeInner(axes[j - 1], axes[j], n); --j) {
      std::swap(axes[j - 1], axes[j]);
    }
  }
  // Merge an axis into the one inside it when every operand steps contiguously across both.
  int merged = 0;
  for (int a = 0; a < na; ++a) {
    if (merged > 0) {
      Axis& in = axes[merged - 1];
      bool ok = true;
      for (int o = 0; o < n && ok; ++o) ok = axes[a].strides[o] == in.strides[o] * in.dim;
      if (ok) {
        in.dim *= axes[a].dim;
        continue;
      }
    }
    axes[merged++] = axes[a];
  }
  nest.num_axes = merged;
  for (int a = 0; a < merged; ++a) {
    nest.dims[a] = axes[a].dim;
    for (int o = 0; o < n; ++o) nest.strides[o][a] = axes[a].strides[o];
  }
  return nest;
}

void GatherStrided(const Pattern& p, DType dtype, const void* src_base, void* dst) {
  TK_INTERNAL_CHECK(dtype != DType::kString);
  Pattern out = DefaultPattern(p.Dims(), "GatherToHost");
  const Pattern* pats[2] = {&out, &p};
  LoopNest nest = MakeLoopNest(pats, 2);
  Dispatch<kNumericDTypes>(dtype, "GatherToHost", [&]<typename T>() {
    Kernel k;
    k.loop = &ConvertLoop<T, T>;
    k.elem_sizes = {static_cast<int64_t>(sizeof(T)), static_cast<int64_t>(sizeof(T)), 0};
    k.copy_elem_size = static_cast<int>(sizeof(T));
    char* bases[2] = {static_cast<char*>(dst),
                      const_cast<char*>(static_cast<const char*>(src_base))};
    RunCpu(nest, bases, k);
  });
}

}  // namespace engine
}  // namespace tensorkit
