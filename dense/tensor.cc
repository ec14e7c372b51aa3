#include "tensorkit/dense/tensor.h"

#include <sstream>

#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/ops.h"

namespace tensorkit {
namespace {

// Visits every element of p in C order, calling f(i, memory_index) with i the C-order position.
template <typename F>
void ForEachCOrder(const Pattern& p, F&& f) {
  const int64_t n = p.NumElements();
  if (n == 0) return;
  std::array<int64_t, kMaxAxes> idx{};
  int64_t m = p.offset;
  for (int64_t i = 0; i < n; ++i) {
    f(i, m);
    for (int r = 0; r < p.num_axes; ++r) {  // raxis 0 is the fastest axis
      if (++idx[r] < p.dims[r]) {
        m += p.strides[r];
        break;
      }
      m -= p.strides[r] * (p.dims[r] - 1);
      idx[r] = 0;
    }
  }
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, const Pattern& pattern, DType dtype)
    : storage_(std::move(storage)), pattern_(pattern), dtype_(dtype) {
  TK_CHECK(storage_ != nullptr, kInvalidArgument, "Tensor: null storage");
  std::string why = WhyInvalid(pattern_);
  TK_CHECK(why.empty(), kInvalidArgument, "Tensor: invalid pattern ", pattern_.ToString(), ": ",
           why);
  if (pattern_.NumElements() > 0) {
    const int64_t capacity = storage_->size_bytes() / DTypeSize(dtype_);
    TK_CHECK(MaxMemoryIndex(pattern_) < capacity, kOutOfRange, "Tensor: pattern ",
             pattern_.ToString(), " reaches element ", MaxMemoryIndex(pattern_),
             " but the storage holds ", capacity, " elements of ", DTypeName(dtype_));
  }
}

Tensor Tensor::Zeros(const std::vector<int64_t>& dims, DType dtype, Device device) {
  Pattern p = DefaultPattern(dims, "Tensor::Zeros");
  return Tensor(Storage::Allocate(dtype, p.NumElements(), device, /*zero=*/true), p, dtype);
}

Tensor Tensor::Empty(const std::vector<int64_t>& dims, DType dtype, Device device) {
  Pattern p = DefaultPattern(dims, "Tensor::Empty");
  return Tensor(Storage::Allocate(dtype, p.NumElements(), device, /*zero=*/false), p, dtype);
}

int64_t Tensor::Dim(int axis) const {
  return pattern_.Dim(NormalizeAxis(axis, pattern_.num_axes, "Tensor::Dim"));
}

int64_t Tensor::Stride(int axis) const {
  return pattern_.Stride(NormalizeAxis(axis, pattern_.num_axes, "Tensor::Stride"));
}

void* Tensor::raw_data() const {
  CheckDefined("Tensor::data");
  return static_cast<char*>(storage_->data()) + pattern_.offset * DTypeSize(dtype_);
}

void Tensor::CheckDefined(const char* op) const {
  TK_CHECK(defined(), kInvalidArgument, op,
           ": the tensor is undefined (default-constructed); create it with Tensor::Zeros, "
           "Tensor::Empty or Tensor::FromVector");
}

Tensor Tensor::WithPattern(const Pattern& pattern) const {
  CheckDefined("Tensor::WithPattern");
  return Tensor(storage_, pattern, dtype_);
}

Tensor Tensor::ViewUnchecked(std::shared_ptr<Storage> storage, const Pattern& pattern,
                             DType dtype) {
  Tensor t;
  t.storage_ = std::move(storage);
  t.pattern_ = pattern;
  t.dtype_ = dtype;
  return t;
}

void GatherToHost(const Tensor& src, void* dst) {
  src.CheckDefined("GatherToHost");
  if (!src.device().is_cpu()) {
    GatherToHost(src.To(Device::Cpu()), dst);
    return;
  }
  const Pattern& p = src.pattern();
  Dispatch(src.dtype(), "GatherToHost", [&]<typename T>() {
    const T* base = static_cast<const T*>(src.storage()->data());
    T* out = static_cast<T*>(dst);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (HasDefaultStrides(p)) {
        std::memcpy(out, base + p.offset, static_cast<size_t>(p.NumElements()) * sizeof(T));
        return;
      }
      engine::GatherStrided(p, src.dtype(), base, out);  // parallel, tiled for transposes
      return;
    }
    ForEachCOrder(p, [&](int64_t i, int64_t m) { out[i] = base[m]; });
  });
}

Tensor Tensor::To(Device device) const {
  CheckDefined("Tensor::To");
  CheckDevice(device, "Tensor::To");
  Tensor out = Empty(Dims(), dtype_, device);
  if (this->device() == device && device.is_cpu()) {
    GatherToHost(*this, out.raw_data());
  } else if (NumElements() > 0) {
    Copy(*this, &out);  // packs a strided source on its own device, then one transfer
  }
  return out;
}

Tensor Tensor::HostContiguous() const {
  if (device().is_cpu() && IsContiguous()) return *this;
  return To(Device::Cpu());
}

Tensor Tensor::Contiguous() const { return IsContiguous() ? *this : Clone(); }

Tensor Tensor::Clone() const {
  CheckDefined("Tensor::Clone");
  return To(device());
}

bool SharesStorage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage() == b.storage();
}

bool Broadcastable(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && Broadcastable(a.pattern(), b.pattern());
}

bool Broadcastable(const Tensor& a, const Tensor& b, const Tensor& c) {
  return a.defined() && b.defined() && c.defined() &&
         Broadcastable(a.pattern(), b.pattern(), c.pattern());
}

bool Compatible(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.dtype() == b.dtype() && a.device() == b.device();
}

bool Compatible(const Tensor& a, const Tensor& b, const Tensor& c) {
  return Compatible(a, b) && Compatible(a, c);
}

bool Identical(const Tensor& a, const Tensor& b) {
  return SharesStorage(a, b) && a.dtype() == b.dtype() && a.pattern() == b.pattern();
}

bool Overlap(const Tensor& a, const Tensor& b) {
  return SharesStorage(a, b) && Overlap(a.pattern(), b.pattern());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  os << "Tensor " << DTypeName(t.dtype()) << ' ' << t.device() << " dims=" << ShapeString(t.Dims())
     << " strides=" << ShapeString(t.Strides()) << " [";
  Tensor host = t.device().is_cpu() ? t : t.To(Device::Cpu());
  Dispatch(t.dtype(), "operator<<", [&]<typename T>() {
    std::vector<T> v = host.ToVector<T>();
    const size_t shown = std::min<size_t>(v.size(), 64);
    for (size_t i = 0; i < shown; ++i) {
      os << (i ? " " : "");
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        os << static_cast<float>(v[i]);
      } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
        os << static_cast<int>(v[i]);
      } else {
        os << v[i];
      }
    }
    if (v.size() > shown) os << " ... (" << v.size() << " elements)";
  });
  return os << ']';
}

}  // namespace tensorkit
