// The choke point of the device seam (see Note [device seam] in executor.h) and the CPU
// executor.
#include "tensorkit/dense/executor.h"

#include <string>

#include "tensorkit/dense/gemm.h"

namespace tensorkit::engine {
namespace {

// The typed CPU loop of `desc`.
Kernel CpuKernel(const OpDesc& desc) {
  static const std::string kEmpty;
  Kernel k;
  k.ctx = desc.coeffs.bytes;
  const int64_t out_size = DTypeSize(desc.out);
  k.elem_sizes = {out_size, out_size, out_size};
  switch (desc.kind) {
    case OpKind::kFill:
      k.loop = ops_internal::FillKernel(desc.out, desc.op);
      if (desc.out == DType::kString) k.ctx = &kEmpty;
      break;
    case OpKind::kConvert: {
      k.loop = ops_internal::ConvertKernel(desc.out, desc.in, desc.op);
      k.elem_sizes[1] = DTypeSize(desc.in);
      const bool plain = desc.in == desc.out && desc.out != DType::kString &&
                         (out_size == 1 || out_size == 2 || out_size == 4 || out_size == 8);
      k.copy_elem_size = plain ? static_cast<int>(out_size) : 0;
      break;
    }
    case OpKind::kUnary:
      k.loop = ops_internal::UnaryKernel(desc.unary, desc.out, desc.mode, desc.op);
      // Summations accumulate (kAxpby); the engine hands an outer summed axis to sum_rows.
      if (desc.mode == Mode::kAxpby) {
        k.sum_rows = ops_internal::UnarySumRowsKernel(desc.unary, desc.out);
      }
      break;
    case OpKind::kBinary:
      k.loop = ops_internal::BinaryKernel(desc.binary, desc.out, desc.mode, desc.op);
      break;
  }
  return k;
}

}  // namespace

int OpDesc::NumOperands() const {
  switch (kind) {
    case OpKind::kFill:
      return 1;
    case OpKind::kConvert:
    case OpKind::kUnary:
      return 2;
    case OpKind::kBinary:
      return 3;
  }
  return 0;
}

void Execute(const OpDesc& desc, const LoopNest& nest, char* const* bases, Device device) {
  TK_INTERNAL_CHECK(nest.num_operands == desc.NumOperands());
  if (nest.empty) return;
  if (device.is_cpu()) {
    RunCpu(nest, bases, CpuKernel(desc));
  } else {
    cuda_exec::Execute(desc, nest, bases, device.index);
  }
}

bool RunGemm(const GemmCall& g, Device device) {
  if (!device.is_cpu()) return cuda_exec::Gemm(g, device.index);
  if (g.dtype != DType::kFloat32 && g.dtype != DType::kFloat64) return false;
  if (g.batch == 1) {
    gemm::Gemm(g.dtype, g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb,
               g.beta, g.c, g.ldc);
  } else {
    gemm::GemmBatched(g.dtype, g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.stride_a,
                      g.b, g.ldb, g.stride_b, g.beta, g.c, g.ldc, g.stride_c, g.batch);
  }
  return true;
}

}  // namespace tensorkit::engine
