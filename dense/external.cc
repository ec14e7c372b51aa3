#include "tensorkit/dense/external.h"

#include <dlpack/dlpack.h>

#include <algorithm>
#include <memory>

namespace tensorkit {
namespace {

constexpr uint8_t kDLBoolCode = 6;  // kDLBool in later DLPack versions; 0.6 lacks the name

DType FromDLDataType(DLDataType t) {
  TK_CHECK(t.lanes == 1, kUnsupported, "FromDLPack: vector dtypes (lanes ", t.lanes,
           ") are not supported");
  const int code = t.code, bits = t.bits;
  if (code == kDLFloat && bits == 16) return DType::kFloat16;
  if (code == kDLFloat && bits == 32) return DType::kFloat32;
  if (code == kDLFloat && bits == 64) return DType::kFloat64;
  if (code == kDLBfloat && bits == 16) return DType::kBFloat16;
  if (code == kDLInt && bits == 8) return DType::kInt8;
  if (code == kDLInt && bits == 16) return DType::kInt16;
  if (code == kDLInt && bits == 32) return DType::kInt32;
  if (code == kDLInt && bits == 64) return DType::kInt64;
  if (code == kDLUInt && bits == 8) return DType::kUInt8;
  if (code == kDLBoolCode && bits == 8) return DType::kBool;
  Throw(ErrorCode::kUnsupported, "FromDLPack: dtype code ", code, " with ", bits,
        " bits has no tensorkit dtype");
}

DLDataType ToDLDataType(DType d) {
  DLDataType t{0, 0, 1};
  t.bits = static_cast<uint8_t>(DTypeSize(d) * 8);
  switch (d) {
    case DType::kBool:
      t.code = kDLBoolCode;
      break;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      t.code = kDLInt;
      break;
    case DType::kUInt8:
      t.code = kDLUInt;
      break;
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      t.code = kDLFloat;
      break;
    case DType::kBFloat16:
      t.code = kDLBfloat;
      break;
    case DType::kString:
      Throw(ErrorCode::kUnsupported, "ToDLPack: string tensors cannot be exported");
  }
  return t;
}

// What a DLManagedTensor from ToDLPack keeps alive.
struct Export {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
};

}  // namespace

Tensor WrapExternal(void* data, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides_in, DType dtype, Device device,
                    Storage::Deleter deleter) {
  std::vector<int64_t> strides = strides_in;
  TK_CHECK(strides.empty() || strides.size() == dims.size(), kInvalidArgument,
           "WrapExternal: dims ", ShapeString(dims), " and strides ", ShapeString(strides),
           " differ in length");
  // A tensor with a dim 0 has no element, so its strides address nothing; producers give such
  // axes any stride (NumPy gives 0 to the axes in front of a dim 0): C order instead.
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  if (strides.empty() || empty) strides = DefaultPattern(dims, "WrapExternal").Strides();
  TK_CHECK(dtype != DType::kString, kUnsupported,
           "WrapExternal: string tensors cannot wrap external memory");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) strides[i] = 0;
    TK_CHECK(!(dims[i] > 1 && strides[i] == 0), kUnsupported, "WrapExternal: axis ", i, " has dim ",
             dims[i],
             " and stride 0 (an expanded view); copy it to a real array "
             "first");
  }
  // Rebase so the lowest reachable element is the storage start and the offset is >= 0.
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > 1) {
      lo += std::min<int64_t>(0, strides[i] * (dims[i] - 1));
      hi += std::max<int64_t>(0, strides[i] * (dims[i] - 1));
    }
  }
  if (empty) lo = hi = 0;
  const int64_t esize = DTypeSize(dtype);
  char* base = static_cast<char*>(data) + lo * esize;
  auto storage = Storage::Wrap(base, empty ? 0 : (hi - lo + 1) * esize, device, std::move(deleter));
  return Tensor(storage, MakePattern(dims, strides, -lo, "WrapExternal"), dtype);
}

Tensor FromDLPack(DLManagedTensor* managed) {
  TK_CHECK(managed != nullptr, kInvalidArgument, "FromDLPack: null DLManagedTensor");
  // From here on the deleter must run exactly once, also when we throw.
  auto release = [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  };
  std::unique_ptr<void, decltype(release)> guard(managed, release);
  const DLTensor& t = managed->dl_tensor;
  TK_CHECK(t.ndim >= 0 && t.ndim <= kMaxAxes, kUnsupported, "FromDLPack: ", t.ndim,
           " axes; tensorkit supports at most ", kMaxAxes);
  Device device;
  if (t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost) {
    device = Device::Cpu();
  } else if (t.device.device_type == kDLCUDA || t.device.device_type == kDLCUDAManaged) {
    device = Device::Cuda(t.device.device_id);
  } else {
    Throw(ErrorCode::kUnsupported, "FromDLPack: device type ",
          static_cast<int>(t.device.device_type), " is not supported (cpu and cuda are)");
  }
  DType dtype = FromDLDataType(t.dtype);
  std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  Tensor out = WrapExternal(data, dims, strides, dtype, device, release);
  guard.release();  // the Storage owns the deleter now
  return out;
}

DLManagedTensor* ToDLPack(const Tensor& t) {
  t.CheckDefined("ToDLPack");
  auto e = std::make_unique<Export>();
  e->tensor = t;
  e->shape = t.Dims();
  e->strides = t.Strides();
  DLTensor& d = e->managed.dl_tensor;
  d.data = t.raw_data();
  d.device.device_type = t.device().is_cpu() ? kDLCPU : kDLCUDA;
  d.device.device_id = t.device().index;
  d.ndim = t.NumAxes();
  d.dtype = ToDLDataType(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* m) { delete static_cast<Export*>(m->manager_ctx); };
  return &e.release()->managed;
}

}  // namespace tensorkit
