// The merge of runs of equal sorted rows on the device (structure.h): Coalesce's sums, and the
// products, maxima and minima of SparseMultiply and the reductions. The only primitive compiled
// per dtype (the combine runs in the compute type, as on the CPU).
#include <algorithm>

#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/functors.h"
#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
using engine::MaxF;
using engine::MinF;
namespace {

// A head of a run of at least min_run equal rows.
struct RunHeadAt {
  const int64_t* idx;
  int64_t n, min_run;
  int rank;
  __host__ __device__ bool operator()(int64_t i) const {
    return sk::StartsRun(idx, i, n, rank, min_run);
  }
};

// Runs (by index, below *count: counted on the device) whose length exceeds `limit`.
struct LongerThan {
  const int64_t* len;
  const int64_t* count;
  int64_t limit;
  __host__ __device__ bool operator()(int64_t k) const { return k < *count && len[k] > limit; }
};

// Runs longer than this are combined by a whole block (MergeLongKernel) instead of one thread.
constexpr int64_t kLongRun = 2048;
static_assert(kLongRun >= kThreads,
              "every thread of MergeLongKernel's block has an entry of its run");

// The length of each of the *count runs (counted on the device; the grid covers any count up
// to n).
__global__ void RunLengthKernel(const uint64_t* heads, const int64_t* count, int64_t n,
                                int64_t* len) {
  const int64_t m = *count;
  for (int64_t k = FirstItem(); k < m; k += ItemStep()) {
    const int64_t end = k + 1 < m ? static_cast<int64_t>(heads[k + 1]) : n;
    len[k] = end - static_cast<int64_t>(heads[k]);
  }
}

// The *count picked runs (counted on the device), compacted.
__global__ void PickRunsKernel(const uint64_t* heads, const int64_t* len, const uint64_t* pick,
                               const int64_t* count, uint64_t* heads_out, int64_t* len_out) {
  const int64_t m = *count;
  for (int64_t j = FirstItem(); j < m; j += ItemStep()) {
    heads_out[j] = heads[pick[j]];
    len_out[j] = len[pick[j]];
  }
}

// One thread per run, combining in entry order: the CPU's sequence of operations, hence its
// bits. Runs longer than kLongRun get only their row here.
template <typename T, typename F>
__global__ void MergeKernel(const int64_t* idx, const T* vals, const uint64_t* heads,
                            const int64_t* len, int64_t m, int rank, int64_t zero_below,
                            int64_t* out_idx, T* out_vals) {
  using C = ComputeType<T>;
  for (int64_t j = FirstItem(); j < m; j += ItemStep()) {
    const int64_t b = static_cast<int64_t>(heads[j]);
    for (int k = 0; k < rank; ++k) out_idx[j * rank + k] = idx[b * rank + k];
    if (len[j] > kLongRun) continue;
    C acc = static_cast<C>(vals[b]);
    for (int64_t i = b + 1; i < b + len[j]; ++i) acc = F::Apply(acc, static_cast<C>(vals[i]));
    if (len[j] < zero_below) acc = F::Apply(acc, C{});
    out_vals[j] = static_cast<T>(acc);
  }
}

// One block per long run (the *num_runs listed in `runs`, counted on the device; the grid is
// sized for the most there can be, and blocks beyond the count do nothing): each thread
// combines a fixed stride of the run, starting from its own first entry (a long run has one for
// every thread), then a fixed tree combines the threads, so the result does not depend on
// timing, nor on which block takes which run.
template <typename T, typename F>
__global__ void __launch_bounds__(kThreads)
    MergeLongKernel(const T* vals, const uint64_t* heads, const int64_t* len, const uint64_t* runs,
                    const int64_t* num_runs, int64_t zero_below, T* out_vals) {
  using C = ComputeType<T>;
  __shared__ C part[kThreads];
  const int64_t count = *num_runs;  // the same for every thread: the loop and barriers agree
  for (int64_t r = blockIdx.x; r < count; r += gridDim.x) {
    const int64_t j = static_cast<int64_t>(runs[r]);
    const int64_t b = static_cast<int64_t>(heads[j]), e = b + len[j];
    C acc = static_cast<C>(vals[b + threadIdx.x]);
    for (int64_t i = b + threadIdx.x + kThreads; i < e; i += kThreads) {
      acc = F::Apply(acc, static_cast<C>(vals[i]));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        part[threadIdx.x] = F::Apply(part[threadIdx.x], part[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      C total = part[0];
      if (len[j] < zero_below) total = F::Apply(total, C{});
      out_vals[j] = static_cast<T>(total);
    }
    __syncthreads();  // part is reused by the next run
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

// One wait: the number of runs kept, which sizes the outputs (and, for Coalesce, tells whether
// anything repeats). Every other count (all runs before the rule's filter, the long runs) stays
// on the device, read by kernels launched for the most there can be.
bool MergeRuns(const Tensor& idx, const Tensor& values, Tensor* merged_idx, Tensor* merged_values,
               const MergeRule& rule) {
  const On on(idx, "Coalesce");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const bool plain = rule.op == MergeOp::kSum && rule.min_run <= 1 && rule.zero_below <= 0;
  if (plain && n <= 1) return false;
  if (n == 0) {
    *merged_idx = Tensor::Empty({0, rank}, DType::kInt64, idx.device());
    *merged_values = Tensor::Empty({0}, values.dtype(), idx.device());
    return true;
  }
  // counts: every run, the runs the rule keeps, the long ones among those.
  DeviceBuffer counts(8 * 3, on.device);
  int64_t* all_runs = counts.as<int64_t>();
  int64_t* kept_runs = all_runs + 1;
  int64_t* long_runs = all_runs + 2;
  // Every run (head and length), then the runs the rule keeps; n is room for any number of runs.
  DeviceBuffer heads(8 * n, on.device), len(8 * n, on.device);
  SelectInto(n, RunHeadAt{Rows(idx), n, 1, rank}, heads.as<uint64_t>(), all_runs, on);
  // The one wait, for the number of runs kept: here when the rule keeps every run; after the
  // filter below otherwise, m holding until then the most there can be.
  int64_t m = rule.min_run <= 1 ? FetchOne(all_runs, on) : n;
  if (plain && m == n) return false;
  RunLengthKernel<<<Grid(m), kThreads, 0, on.stream>>>(heads.as<uint64_t>(), all_runs, n,
                                                       len.as<int64_t>());
  CheckLaunch(on);
  const int64_t* kept = all_runs;
  if (rule.min_run > 1) {
    DeviceBuffer pick(8 * n, on.device), kept_heads(8 * n, on.device), kept_len(8 * n, on.device);
    SelectInto(n, LongerThan{len.as<int64_t>(), all_runs, rule.min_run - 1}, pick.as<uint64_t>(),
               kept_runs, on);
    PickRunsKernel<<<Grid(n), kThreads, 0, on.stream>>>(
        heads.as<uint64_t>(), len.as<int64_t>(), pick.as<uint64_t>(), kept_runs,
        kept_heads.as<uint64_t>(), kept_len.as<int64_t>());
    CheckLaunch(on);
    heads = std::move(kept_heads);
    len = std::move(kept_len);
    kept = kept_runs;
    m = FetchOne(kept, on);
  }
  *merged_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
  *merged_values = Tensor::Empty({m}, values.dtype(), idx.device());
  if (m == 0) return true;
  // Runs are disjoint, so at most n / (kLongRun + 1) of them are long: one block each.
  const int64_t most_long = std::min(m, n / (kLongRun + 1));
  DeviceBuffer long_list(8 * most_long, on.device);
  if (most_long > 0) {
    SelectInto(m, LongerThan{len.as<int64_t>(), kept, kLongRun}, long_list.as<uint64_t>(),
               long_runs, on);
  }
  Dispatch<kNumericDTypes>(values.dtype(), on.op, [&]<typename T>() {
    const T* vals = static_cast<const T*>(values.raw_data());
    T* out = static_cast<T*>(merged_values->raw_data());
    const auto launch = [&]<typename F>() {
      MergeKernel<T, F><<<Grid(m), kThreads, 0, on.stream>>>(
          Rows(idx), vals, heads.as<uint64_t>(), len.as<int64_t>(), m, rank, rule.zero_below,
          static_cast<int64_t*>(merged_idx->raw_data()), out);
      if (most_long > 0) {
        MergeLongKernel<T, F>
            <<<static_cast<unsigned>(std::min<int64_t>(most_long, kMaxBlocks)), kThreads, 0,
               on.stream>>>(vals, heads.as<uint64_t>(), len.as<int64_t>(), long_list.as<uint64_t>(),
                            long_runs, rule.zero_below, out);
      }
    };
    switch (rule.op) {
      case MergeOp::kSum:
        return launch.template operator()<engine::AddF>();
      case MergeOp::kProduct:
        return launch.template operator()<engine::MulF>();
      case MergeOp::kMax:
        return launch.template operator()<MaxF>();
      case MergeOp::kMin:
        return launch.template operator()<MinF>();
    }
  });
  CheckLaunch(on);
  return true;
}

}  // namespace tensorkit::sparse_cuda
