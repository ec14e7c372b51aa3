#include "tensorkit/embed/torch/torch_glue.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>

#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"

namespace tensorkit::torch_ops {

std::optional<DType> ToDType(ScalarType st) {
  switch (st) {
    case ScalarType::Bool:
      return DType::kBool;
    case ScalarType::Char:
      return DType::kInt8;
    case ScalarType::Byte:
      return DType::kUInt8;
    case ScalarType::Short:
      return DType::kInt16;
    case ScalarType::Int:
      return DType::kInt32;
    case ScalarType::Long:
      return DType::kInt64;
    case ScalarType::Half:
      return DType::kFloat16;
    case ScalarType::BFloat16:
      return DType::kBFloat16;
    case ScalarType::Float:
      return DType::kFloat32;
    case ScalarType::Double:
      return DType::kFloat64;
    default:
      return std::nullopt;
  }
}

ScalarType ToScalarType(DType dt) {
  switch (dt) {
    case DType::kBool:
      return ScalarType::Bool;
    case DType::kInt8:
      return ScalarType::Char;
    case DType::kUInt8:
      return ScalarType::Byte;
    case DType::kInt16:
      return ScalarType::Short;
    case DType::kInt32:
      return ScalarType::Int;
    case DType::kInt64:
      return ScalarType::Long;
    case DType::kFloat16:
      return ScalarType::Half;
    case DType::kBFloat16:
      return ScalarType::BFloat16;
    case DType::kFloat32:
      return ScalarType::Float;
    case DType::kFloat64:
      return ScalarType::Double;
    case DType::kString:
      break;
  }
  Throw(ErrorCode::kUnsupported, "a string tensor has no torch dtype");
}

std::string ScalarTypeName(ScalarType st) {
  const std::optional<DType> dt = ToDType(st);
  return dt ? std::string("torch.") + DTypeName(*dt)
            : "torch dtype #" + std::to_string(static_cast<int>(st));
}

std::string SizesText(const TorchTensor& t) {
  std::vector<int64_t> dims;
  for (int64_t a = 0; a < t.dim(); ++a) dims.push_back(t.size(a));
  return ShapeString(dims);
}

Device DeviceOf(const TorchTensor& t, const char* op, const char* what) {
  if (t.is_cpu()) return Device::Cpu();
  TK_CHECK(t.is_cuda(), kUnsupported, op, ": ", what,
           " is neither on the CPU nor on a CUDA device; move it with .cpu() or .cuda()");
  return Device::Cuda(static_cast<int>(t.get_device_index()));
}

namespace {

Tensor WrapOn(const TorchTensor& t, Device device, const char* op, const char* what) {
  const std::optional<DType> dt = ToDType(t.scalar_type());
  TK_CHECK(dt.has_value(), kDTypeMismatch, op, ": ", what, " has dtype ",
           ScalarTypeName(t.scalar_type()), ", which tensorkit does not hold");
  std::vector<int64_t> dims, strides;
  bool expanded = false;
  for (int64_t a = 0; a < t.dim(); ++a) {
    dims.push_back(t.size(a));
    strides.push_back(t.stride(a));
    expanded = expanded || (t.stride(a) == 0 && t.size(a) > 1);
  }
  if (expanded) {
    const TorchTensor c = torch::stable::contiguous(t);
    strides.clear();
    for (int64_t a = 0; a < c.dim(); ++a) strides.push_back(c.stride(a));
    // The copy's handle rides in the deleter, so the memory lives as long as the Tensor.
    auto keep = std::make_shared<TorchTensor>(c);
    return WrapExternal(c.data_ptr(), dims, strides, *dt, device,
                        [keep](void*) mutable { keep.reset(); });
  }
  return WrapExternal(t.data_ptr(), dims, strides, *dt, device);
}

// aoti_torch_get_current_cuda_stream, from libtorch_cuda when it is loaded (torch_glue.h).
using CurrentCudaStreamFn = int32_t (*)(int32_t, void**);
CurrentCudaStreamFn FindCurrentCudaStream() {
  static const CurrentCudaStreamFn fn = [] {
    void* lib = dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
    void* sym = dlsym(lib != nullptr ? lib : RTLD_DEFAULT, "aoti_torch_get_current_cuda_stream");
    return reinterpret_cast<CurrentCudaStreamFn>(sym);
  }();
  return fn;
}

}  // namespace

Tensor Wrap(const TorchTensor& t, const char* op, const char* what) {
  TK_CHECK(t.defined(), kInvalidArgument, op, ": ", what, " is an undefined tensor");
  TK_CHECK(t.is_cpu(), kUnsupported, op, ": ", what,
           " is not on the CPU; this operator runs on the CPU only (move it with .cpu())");
  return WrapOn(t, Device::Cpu(), op, what);
}

Tensor WrapAny(const TorchTensor& t, const char* op, const char* what) {
  TK_CHECK(t.defined(), kInvalidArgument, op, ": ", what, " is an undefined tensor");
  return WrapOn(t, DeviceOf(t, op, what), op, what);
}

TorchTensor Export(const Tensor& t) {
  const Device device = t.device();
  const std::vector<int64_t> dims = t.Dims(), strides = t.Strides();
  // The handle keeps the storage; torch calls the deleter once, when its storage goes.
  auto* keep = new Tensor(t);
  const torch::stable::Device where =
      device.is_cuda()
          ? torch::stable::Device(torch::headeronly::DeviceType::CUDA,
                                  static_cast<torch::stable::DeviceIndex>(device.index))
          : torch::stable::Device(torch::headeronly::DeviceType::CPU);
  return torch::stable::from_blob(t.NumElements() == 0 ? nullptr : t.raw_data(), dims, strides,
                                  where, ToScalarType(t.dtype()), [keep](void*) { delete keep; });
}

TorchTensor Empty(const std::vector<int64_t>& dims, ScalarType st) {
  return torch::stable::empty(dims, st, std::nullopt,
                              torch::stable::Device(torch::headeronly::DeviceType::CPU));
}

TorchTensor Zeros(const std::vector<int64_t>& dims, ScalarType st) {
  TorchTensor t = Empty(dims, st);
  torch::stable::zero_(t);
  return t;
}

TorchStream::TorchStream(const TorchTensor& t, const char* op) {
  if (!t.defined() || !t.is_cuda()) return;
  const int index = static_cast<int>(t.get_device_index());
  void* stream = nullptr;
  if (const CurrentCudaStreamFn fn = FindCurrentCudaStream()) {
    TK_CHECK(fn(index, &stream) == 0, kInternal, op,
             ": torch could not give its current CUDA stream of device ", index);
  }
  guard_ =
      std::make_unique<cuda::StreamGuard>(Device::Cuda(index), static_cast<cuda::Stream>(stream));
}

TorchStream::~TorchStream() = default;

Tensor OnDevice(const Tensor& t, Device device) { return t.device() == device ? t : t.To(device); }

Combiner ParseCombiner(const std::string& name, const char* op) {
  for (Combiner c :
       {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
    if (name == CombinerName(c)) return c;
  }
  Throw(ErrorCode::kInvalidArgument, op,
        ": the reduction must be \"sum\", \"mean\", \"sqrtn\", \"max\" or \"min\", got \"", name,
        "\"");
}

Tensor IndexVector(const TorchTensor& t, const char* op, const char* what) {
  TK_CHECK(t.dim() == 1, kInvalidArgument, op, ": ", what, " must be 1-D, got shape ",
           SizesText(t));
  TK_CHECK(t.scalar_type() == ScalarType::Int || t.scalar_type() == ScalarType::Long,
           kDTypeMismatch, op, ": ", what, " must be torch.int32 or torch.int64, got ",
           ScalarTypeName(t.scalar_type()));
  const Tensor w = WrapAny(t, op, what).HostContiguous();
  if (w.dtype() == DType::kInt64) return w;
  Tensor out = Tensor::Empty({w.Dim(0)}, DType::kInt64);
  Copy(w, &out);
  return out;
}

}  // namespace tensorkit::torch_ops
