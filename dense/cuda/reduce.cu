// Summation into dim-1 outputs on the GPU: deterministic (see ReducePlan in geometry.h).
#include <algorithm>
#include <memory>

#include "tensorkit/common/storage.h"
#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::dense_cuda {

void LaunchReduce(const engine::OpDesc& d, const LoopNest& nest, char* const* first, cudaStream_t s,
                  int device) {
  TK_INTERNAL_CHECK(d.mode == Mode::kAxpby);
  Dispatch<kComputeDTypes>(d.out, d.op, [&]<typename T>() {
    using C = ComputeType<T>;
    const ReducePlan p = PlanReduce(nest);
    ReduceArgs<T> args{};
    args.out = reinterpret_cast<T*>(first[0]);
    args.a = reinterpret_cast<const T*>(first[1]);
    args.b = d.kind == engine::OpKind::kBinary ? reinterpret_cast<const T*>(first[2]) : nullptr;
    args.unary = d.unary;
    args.binary = d.binary;
    args.k = *reinterpret_cast<const Coeffs<C>*>(d.coeffs.bytes);
    args.mode = d.mode;
    // Partials live in device memory freed on the stream after the combine pass.
    std::shared_ptr<Storage> partial;
    if (p.splits > 1) {
      partial = Storage::Allocate(DTypeOf<C>, p.k * p.splits, Device::Cuda(device));
      args.partial = static_cast<C*>(partial->data());
    }
    if (p.rows && p.lanes < kThreads) {
      const int64_t groups = kThreads / p.lanes;
      RowGroupReduceKernel<T>
          <<<static_cast<unsigned>(std::min((p.k + groups - 1) / groups, kMaxGridX)), kThreads, 0,
             s>>>(p, args);
      TK_CUDA_CHECK(d.op, cudaGetLastError());
    } else if (p.rows) {
      const dim3 grid(static_cast<unsigned>(std::min(p.splits, kMaxGridX)),
                      static_cast<unsigned>(std::min(p.k, kMaxGridY)));
      RowReduceKernel<T><<<grid, kThreads, 0, s>>>(p, args);
      TK_CUDA_CHECK(d.op, cudaGetLastError());
      if (p.splits > 1) {
        CombineRowsKernel<T>
            <<<static_cast<unsigned>(std::min(p.k, kMaxGridX)), kThreads, 0, s>>>(p, args);
        TK_CUDA_CHECK(d.op, cudaGetLastError());
      }
    } else {
      const int64_t col_blocks = (p.k + kColX - 1) / kColX;
      const dim3 grid(static_cast<unsigned>(std::min(col_blocks, kMaxGridX)),
                      static_cast<unsigned>(std::min(p.splits, kMaxGridY)));
      ColReduceKernel<T><<<grid, dim3(kColX, kColLanes), 0, s>>>(p, args);
      TK_CUDA_CHECK(d.op, cudaGetLastError());
      if (p.splits > 1) {
        const int64_t blocks = (p.k + kThreads - 1) / kThreads;
        CombineColsKernel<T>
            <<<static_cast<unsigned>(std::min(blocks, kMaxGridX)), kThreads, 0, s>>>(p, args);
        TK_CUDA_CHECK(d.op, cudaGetLastError());
      }
    }
  });
}

}  // namespace tensorkit::dense_cuda
