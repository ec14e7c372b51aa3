// Sparse-dense products on a CUDA device through cuSPARSE's generic API, and the key kernel of
// the batched product. Everything is enqueued on the device's current stream; nothing here
// waits for the device, except cuSPARSE itself inside SpGEMM: C's entry count, which
// cusparseSpMatGetSize hands to the host to size the result, is computed on the device.
//
// Algorithms, chosen for the same bits on every run (the cuSPARSE documentation's algorithm
// tables): cusparseSpMV with CUSPARSE_SPMV_CSR_ALG2 ("deterministic (bit-wise) results for each
// run"; ALG1, the default, is not) and cusparseSpMM with CUSPARSE_SPMM_CSR_ALG1 (deterministic,
// takes row- and column-major B and C and 64-bit indices). Both only for the non-transposed
// sparse operand, which is the only one the callers pass (spmm_plan.h, op flags). cusparseSpGEMM
// with CUSPARSE_SPGEMM_ALG1 ("deterministic (bit-wise) results for each run"; ALG2/ALG3 trade
// memory for that guarantee), on 32-bit copies of the index arrays: the index type its CSR
// operands are documented to take.
#include <algorithm>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/sparse/cuda/compute.h"
#include "tensorkit/sparse/cuda/cusparse_util.h"

namespace tensorkit::sparse_cuda {
namespace {

namespace cb = common_cuda;

// alpha and beta in the compute type, as cuSPARSE reads them (host pointer mode).
struct Coefficients {
  float f32[2];
  double f64[2];
  bool wide;
  const void* alpha() const { return wide ? static_cast<const void*>(&f64[0]) : &f32[0]; }
  const void* beta() const { return wide ? static_cast<const void*>(&f64[1]) : &f32[1]; }
};

Coefficients MakeCoefficients(Scalar alpha, Scalar beta, cudaDataType compute) {
  Coefficients k{};
  k.wide = compute == CUDA_R_64F;
  k.f64[0] = alpha.ToDouble();
  k.f64[1] = beta.ToDouble();
  k.f32[0] = static_cast<float>(k.f64[0]);
  k.f32[1] = static_cast<float>(k.f64[1]);
  return k;
}

__global__ void BatchKeysKernel(const int64_t* idx, int64_t s0, int64_t s1, int64_t nnz, int64_t m,
                                int64_t k, bool block_diagonal, int64_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz;
       e += step) {
    const int64_t* row = idx + e * s0;
    BatchKeys(row[0], row[s1], row[2 * s1], m, k, block_diagonal, &out[2 * e], &out[2 * e + 1]);
  }
}

}  // namespace

void Spmm(const char* op, DType dtype, const CsrOperand& a, const DenseOperand& b,
          const DenseOperand& c, bool vector, Scalar alpha, Scalar beta, int device) {
  cudaDataType value_type, compute_type;
  TK_CHECK(CudaTypes(dtype, &value_type, &compute_type), kInternal, op, ": dtype ",
           DTypeName(dtype), " reached cuSPARSE");
  const Coefficients k = MakeCoefficients(alpha, beta, compute_type);
  cb::DeviceGuard guard(device, op);
  cb::CusparseLease lease = cb::Cusparse(device, op);
  const SpMat mat(lease, a.rows, a.cols, a.nnz, a.ptr, a.minor, a.values, value_type, op);
  const cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  if (vector) {
    const DnVec x(lease, a.cols, b.data, value_type, op), y(lease, a.rows, c.data, value_type, op);
    TK_CUSPARSE_CHECK(op, lease.api->cusparseSpMV_bufferSize(
                              lease.handle, n, k.alpha(), mat.get(), x.get(), k.beta(), y.get(),
                              compute_type, CUSPARSE_SPMV_CSR_ALG2, &bytes));
    const cb::DeviceBuffer work(static_cast<int64_t>(bytes), device);
    TK_CUSPARSE_CHECK(
        op, lease.api->cusparseSpMV(lease.handle, n, k.alpha(), mat.get(), x.get(), k.beta(),
                                    y.get(), compute_type, CUSPARSE_SPMV_CSR_ALG2, work.data()));
    return;
  }
  const DnMat bm(lease, b.rows, b.cols, b.layout.ld, b.layout.row_major, b.data, value_type, op);
  const DnMat cm(lease, c.rows, c.cols, c.layout.ld, c.layout.row_major, c.data, value_type, op);
  TK_CUSPARSE_CHECK(op, lease.api->cusparseSpMM_bufferSize(
                            lease.handle, n, n, k.alpha(), mat.get(), bm.get(), k.beta(), cm.get(),
                            compute_type, CUSPARSE_SPMM_CSR_ALG1, &bytes));
  const cb::DeviceBuffer work(static_cast<int64_t>(bytes), device);
  TK_CUSPARSE_CHECK(
      op, lease.api->cusparseSpMM(lease.handle, n, n, k.alpha(), mat.get(), bm.get(), k.beta(),
                                  cm.get(), compute_type, CUSPARSE_SPMM_CSR_ALG1, work.data()));
}

CsrArrays Spgemm(const char* op, const CsrArrays& a, int64_t a_cols, const CsrArrays& b,
                 int64_t b_cols) {
  const DType dtype = a.values.dtype();
  const int device = a.values.device().index;
  const int64_t rows = a.ptr.Dim(0) - 1;
  cudaDataType value_type, compute_type;
  TK_CHECK(CudaTypes(dtype, &value_type, &compute_type), kInternal, op, ": dtype ",
           DTypeName(dtype), " reached cuSPARSE");
  const Coefficients k = MakeCoefficients(1, 0, compute_type);
  cb::DeviceGuard guard(device, op);
  cb::CusparseLease lease = cb::Cusparse(device, op);
  const SpMat ma(lease, rows, a_cols, a.minor.Dim(0), a.ptr.raw_data(), a.minor.raw_data(),
                 a.values.raw_data(), CUSPARSE_INDEX_32I, value_type, op);
  const SpMat mb(lease, a_cols, b_cols, b.minor.Dim(0), b.ptr.raw_data(), b.minor.raw_data(),
                 b.values.raw_data(), CUSPARSE_INDEX_32I, value_type, op);
  const SpMat mc(lease, rows, b_cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I, value_type,
                 op);
  const SpGemmDescr spgemm(lease, op);
  const cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
  constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_ALG1;
  const auto& api = *lease.api;
  // Each phase is asked its buffer size first (null buffer), then run with that much.
  size_t bytes1 = 0, bytes2 = 0;
  TK_CUSPARSE_CHECK(op, api.cusparseSpGEMM_workEstimation(
                            lease.handle, n, n, k.alpha(), ma.get(), mb.get(), k.beta(), mc.get(),
                            compute_type, kAlg, spgemm.get(), &bytes1, nullptr));
  const cb::DeviceBuffer work1(static_cast<int64_t>(bytes1), device);
  TK_CUSPARSE_CHECK(op, api.cusparseSpGEMM_workEstimation(
                            lease.handle, n, n, k.alpha(), ma.get(), mb.get(), k.beta(), mc.get(),
                            compute_type, kAlg, spgemm.get(), &bytes1, work1.data()));
  TK_CUSPARSE_CHECK(
      op, api.cusparseSpGEMM_compute(lease.handle, n, n, k.alpha(), ma.get(), mb.get(), k.beta(),
                                     mc.get(), compute_type, kAlg, spgemm.get(), &bytes2, nullptr));
  const cb::DeviceBuffer work2(static_cast<int64_t>(bytes2), device);
  TK_CUSPARSE_CHECK(op, api.cusparseSpGEMM_compute(lease.handle, n, n, k.alpha(), ma.get(),
                                                   mb.get(), k.beta(), mc.get(), compute_type, kAlg,
                                                   spgemm.get(), &bytes2, work2.data()));
  int64_t c_rows = 0, c_cols = 0, nnz = 0;
  TK_CUSPARSE_CHECK(op, api.cusparseSpMatGetSize(mc.get(), &c_rows, &c_cols, &nnz));
  TK_CHECK(nnz < kSpgemmIndexLimit, kUnsupported, op, ": the product of ", rows, "x", a_cols,
           " and ", a_cols, "x", b_cols, " has ", nnz, " entries, more than the 2^31 - 1 that ",
           "cuSPARSE's SpGEMM can index; multiply blocks of rows of a, or run it on the CPU");
  const Device where = a.values.device();
  CsrArrays out{Tensor::Empty({rows + 1}, DType::kInt32, where),
                Tensor::Empty({nnz}, DType::kInt32, where), Tensor::Empty({nnz}, dtype, where)};
  TK_CUSPARSE_CHECK(op, api.cusparseCsrSetPointers(mc.get(), out.ptr.raw_data(),
                                                   out.minor.raw_data(), out.values.raw_data()));
  TK_CUSPARSE_CHECK(
      op, api.cusparseSpGEMM_copy(lease.handle, n, n, k.alpha(), ma.get(), mb.get(), k.beta(),
                                  mc.get(), compute_type, kAlg, spgemm.get()));
  return out;
}

Tensor BatchKeyRows(const Tensor& indices, int64_t m, int64_t k, bool block_diagonal,
                    const char* op) {
  const int64_t nnz = indices.Dim(0);
  const int device = indices.device().index;
  Tensor out = Tensor::Empty({nnz, 2}, DType::kInt64, indices.device());
  if (nnz == 0) return out;
  cb::DeviceGuard guard(device, op);
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((nnz + kThreads - 1) / kThreads, 65536));
  BatchKeysKernel<<<blocks, kThreads, 0, cb::Stream(device)>>>(
      indices.data<int64_t>(), indices.Stride(0), indices.Stride(1), nnz, m, k, block_diagonal,
      out.data<int64_t>());
  TK_CUDA_CHECK(op, cudaGetLastError());
  return out;
}

}  // namespace tensorkit::sparse_cuda
