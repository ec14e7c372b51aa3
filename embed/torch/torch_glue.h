// embed/torch/torch_glue.h: what every tensorkit operator in PyTorch shares.
//
// Glossary
//   stable ABI   PyTorch's C shim (torch/csrc/stable/): tensors as opaque handles, operators
//                registered with STABLE_TORCH_LIBRARY. A library built on it against one torch
//                loads into later ones (this one targets 2.11, the first with from_blob's
//                deleter).
//   wrap         a tensorkit Tensor over a torch tensor's memory (WrapExternal): no copy. The
//                torch tensor must outlive it, which holds within one kernel call.
//   export       a torch tensor over a tensorkit Tensor's memory (from_blob with a deleter that
//                keeps the tensorkit storage alive): no copy either.
//   Run          the one way a kernel body runs: inside torch's intra-op thread count, with
//                every error turned into a std::runtime_error (a RuntimeError in Python) whose
//                message starts with the operator's name, so that nothing else leaves a kernel.
#ifndef TENSORKIT_EMBED_TORCH_TORCH_GLUE_H_
#define TENSORKIT_EMBED_TORCH_TORCH_GLUE_H_

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"

namespace tensorkit::torch_ops {

using TorchTensor = torch::stable::Tensor;
using torch::headeronly::ScalarType;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Runs body() as the kernel of operator `op` ("tensorkit::name"), see the glossary.
template <typename Body>
auto Run(const char* op, const Body& body) -> decltype(body());

// The tensorkit dtype of a torch dtype, if there is one.
std::optional<DType> ToDType(ScalarType st);
ScalarType ToScalarType(DType dt);
// "torch.float32": a torch dtype as the messages show it.
std::string ScalarTypeName(ScalarType st);

// A tensorkit Tensor over t's memory, t's sizes and strides (no copy). t must be a CPU tensor
// (else an Error naming `op` and `what`: the operators without a device path) of a dtype
// tensorkit has. An expanded tensor (stride 0 on an axis of more than one element), which a
// tensorkit view cannot alias, is copied first.
Tensor Wrap(const TorchTensor& t, const char* op, const char* what);
// Wrap for the operators with a device path: t on the CPU or a CUDA device (then the Tensor is
// on that device; make a TorchStream first, so that the memory's home is torch's stream).
Tensor WrapAny(const TorchTensor& t, const char* op, const char* what);
// The tensorkit device of a torch tensor (the CPU or a CUDA device; another is an Error).
Device DeviceOf(const TorchTensor& t, const char* op, const char* what);
// A torch tensor over t's memory (no copy), on t's device; t keeps its storage alive until
// torch lets go.
TorchTensor Export(const Tensor& t);
// A new, uninitialized CPU torch tensor.
TorchTensor Empty(const std::vector<int64_t>& dims, ScalarType st);
// A new CPU torch tensor of zeros.
TorchTensor Zeros(const std::vector<int64_t>& dims, ScalarType st);

// For one kernel call on CUDA tensors: makes torch's current CUDA stream of t's device the
// stream tensorkit enqueues on (tensorkit::cuda::StreamGuard), so that the kernel is ordered
// with torch's work before and after it as torch's own kernels are. The stream comes from
// aoti_torch_get_current_cuda_stream, which the stable C shim declares but libtorch_cuda (not
// libtorch_cpu) defines: it is looked up in the loaded libtorch_cuda at run time, so this library
// still loads into a CPU-only torch. (torch::stable::accelerator's native stream handle needs
// torch >= 2.13, above this library's target.) Without it, the legacy default stream, which
// torch's default stream is. Does nothing for a CPU tensor.
class TorchStream {
 public:
  TorchStream(const TorchTensor& t, const char* op);
  ~TorchStream();
  TorchStream(const TorchStream&) = delete;
  TorchStream& operator=(const TorchStream&) = delete;

 private:
  std::unique_ptr<cuda::StreamGuard> guard_;
};

// The same data on `device` (itself when it is there already).
Tensor OnDevice(const Tensor& t, Device device);

// The elements of a 1-D int32 or int64 tensor as int64 on the CPU (a copy only for int32, a
// strided or a CUDA tensor, whose elements are copied to the host); an Error naming `op` and
// `what` for another rank or dtype.
Tensor IndexVector(const TorchTensor& t, const char* op, const char* what);
// "[2, 3]".
std::string SizesText(const TorchTensor& t);

// The combiner a reduction name gives ("sum", "mean", "sqrtn", "max", "min"); an Error naming
// `op` for another.
Combiner ParseCombiner(const std::string& name, const char* op);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename Body>
auto Run(const char* op, const Body& body) -> decltype(body()) {
  try {
    const int threads = static_cast<int>(torch::stable::get_num_threads());
    if constexpr (std::is_void_v<decltype(body())>) {
      RunWithThreadLimit(threads > 0 ? threads : 1, [&] { body(); });
    } else {
      std::optional<decltype(body())> result;
      RunWithThreadLimit(threads > 0 ? threads : 1, [&] { result.emplace(body()); });
      return std::move(*result);
    }
  } catch (const std::exception& e) {
    // Messages of this library's own checks start with the operator's name already.
    const std::string what = e.what();
    throw std::runtime_error(what.rfind(op, 0) == 0 ? what : std::string(op) + ": " + what);
  } catch (...) {
    throw std::runtime_error(std::string(op) + ": unknown C++ exception");
  }
}

}  // namespace tensorkit::torch_ops

#endif  // TENSORKIT_EMBED_TORCH_TORCH_GLUE_H_
