// tensorkit/dense/executor.h: the device seam of the kernel engine (not a public header).
//
// Glossary
//   OpDesc      a device-neutral description of one engine pass: what to compute (fill,
//               conversion, unary or binary functor), the dtypes, the Mode and the coefficients.
//               Together with a LoopNest and the operands' base pointers it is everything an
//               executor needs.
//   executor    runs an OpDesc over a LoopNest on one device: the CPU executor picks a typed
//               inner loop and calls RunCpu; the CUDA executor (dense/cuda/) launches kernels
//               on the device's current stream. Execute is the one choke point between them.
//   GemmCall    a (batched) row-major GEMM read off an AddProduct nest; RunGemm hands it to the
//               CPU BLAS wrapper or to cuBLAS.
//
// Note [device seam]
// ~~~~~~~~~~~~~~~~~~
// ops.cc checks the operands, builds the LoopNest (device-neutral index arithmetic), decides
// what the op needs (beta pass, summation, GEMM, conversion first) and describes each pass as an
// OpDesc. Execute sends it to the executor of the output's device; all operands are on that
// device (ops.cc refuses mixed devices). Both executors instantiate the same functors
// (functors.h), so an op is added once: a functor NameF and one line X(Name) in the list of
// functions (elementwise_fns.h), which generates the UnaryFn/BinaryFn name, the cases of
// DispatchUnary/DispatchBinary and of the CUDA ApplyUnary/ApplyBinary, and the public functions
// of ops.h/ops.cc.
#ifndef TENSORKIT_DENSE_EXECUTOR_H_
#define TENSORKIT_DENSE_EXECUTOR_H_

#include <cstdint>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::engine {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

enum class OpKind { kFill, kConvert, kUnary, kBinary };

struct OpDesc {
  OpKind kind = OpKind::kUnary;
  UnaryFn unary = UnaryFn::kIdentity;
  BinaryFn binary = BinaryFn::kAdd;
  DType out = DType::kFloat32;  // the output's dtype; every operand's for kUnary and kBinary
  DType in = DType::kFloat32;   // the input's dtype for kConvert
  Mode mode = Mode::kAssign;
  // kUnary, kBinary: engine::Coeffs of the compute type; kFill: one element of `out` (an
  // empty string for kString).
  ops_internal::CoeffsBuf coeffs;
  const char* op = "";  // the public operation, for messages

  int NumOperands() const;
};

// Runs `desc` over `nest`; bases[k] is operand k's storage data pointer on `device`.
void Execute(const OpDesc& desc, const LoopNest& nest, char* const* bases, Device device);

// The CPU executor (cpu/executor.cc): what Execute calls for the CPU.
void ExecuteCpu(const OpDesc& desc, const LoopNest& nest, char* const* bases);

struct GemmCall {
  DType dtype = DType::kFloat32;
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double alpha = 1, beta = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // in elements, for batch > 1
};

// Runs the product on `device` if that device's GEMM library takes the dtype and sizes; false
// (nothing done) otherwise.
bool RunGemm(const GemmCall& call, Device device);

}  // namespace tensorkit::engine

// The CUDA executor (dense/cuda/, or dense/no_gpu/ without CUDA): what Execute and RunGemm call
// for a CUDA device.
namespace tensorkit::dense_cuda {

void Execute(const engine::OpDesc& desc, const engine::LoopNest& nest, char* const* bases,
             int device);
bool Gemm(const engine::GemmCall& call, int device);

}  // namespace tensorkit::dense_cuda

#endif  // TENSORKIT_DENSE_EXECUTOR_H_
