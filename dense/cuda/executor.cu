// The CUDA executor: where Execute sends an OpDesc for a CUDA device (see Note [device seam]).
// Everything is enqueued on the device's current stream; nothing waits.
#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::dense_cuda {

void Execute(const engine::OpDesc& d, const LoopNest& nest, char* const* bases, int device) {
  TK_INTERNAL_CHECK(d.out != DType::kString && d.in != DType::kString);
  common_cuda::DeviceGuard guard(device, d.op);
  const cudaStream_t s = common_cuda::Stream(device);
  char* first[kMaxOperands] = {nullptr, nullptr, nullptr};
  const DType dtypes[kMaxOperands] = {d.out, d.kind == engine::OpKind::kConvert ? d.in : d.out,
                                      d.out};
  for (int o = 0; o < nest.num_operands; ++o) {
    first[o] = bases[o] + nest.offsets[o] * DTypeSize(dtypes[o]);
  }
  switch (d.kind) {
    case engine::OpKind::kFill:
      return LaunchFill(d, nest, first, s);
    case engine::OpKind::kConvert:
      TK_INTERNAL_CHECK(!nest.Sums());  // ops.cc converts first, then sums in the output dtype
      return LaunchConvert(d, nest, first, s);
    case engine::OpKind::kUnary:
      if (nest.Sums()) return LaunchReduce(d, nest, first, s, device);
      return LaunchUnary(d, nest, first, s);
    case engine::OpKind::kBinary:
      if (nest.Sums()) return LaunchReduce(d, nest, first, s, device);
      return LaunchBinary(d, nest, first, s);
  }
}

}  // namespace tensorkit::dense_cuda
