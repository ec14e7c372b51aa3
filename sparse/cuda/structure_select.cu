// Entries by position on the device (structure.h): Slice's box (a select of the entries inside
// it) and Split's pieces (one stable sort by piece, then one gather per piece), rows shifted to
// the box's or piece's start.
#include <algorithm>

#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
namespace {

struct InsideAt {
  const int64_t* idx;
  ArgArray<int64_t> start, size;  // by axis
  int rank, only_axis;
  __host__ __device__ bool operator()(int64_t i) const {
    const int64_t* s = start.data();
    const int64_t* z = size.data();
    bool inside = true;
    for (int a = 0; a < rank; ++a) {
      if (only_axis >= 0 && a != only_axis) continue;
      const int64_t v = idx[i * rank + a];
      inside &= v >= s[a] && v - s[a] < z[a];
    }
    return inside;
  }
};

// Slice's shift: the box's start on every axis.
struct BoxStart {
  ArgArray<int64_t> start;
  __device__ int64_t operator()(int a) const { return start.data()[a]; }
};
// Split's shift: the piece's start on the split axis, nothing elsewhere.
struct PieceStart {
  int axis;
  int64_t start;
  __device__ int64_t operator()(int a) const { return a == axis ? start : 0; }
};

template <typename Start>
__global__ void GatherShiftedKernel(const int64_t* idx, const uint64_t* pos, int64_t m, int rank,
                                    Start start, int64_t* out) {
  for (int64_t i = FirstItem(); i < m * rank; i += ItemStep()) {
    const int64_t k = i / rank;
    const int a = static_cast<int>(i - k * rank);
    out[i] = idx[static_cast<int64_t>(pos[k]) * rank + a] - start(a);
  }
}

__global__ void PieceKeyKernel(const int64_t* idx, int64_t n, int rank, int axis,
                               ArgArray<int64_t> starts, int64_t num, uint64_t* keys,
                               uint64_t* perm) {
  const int64_t* st = starts.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = static_cast<uint64_t>(sk::SliceOf(idx[i * rank + axis], st, num));
    perm[i] = static_cast<uint64_t>(i);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

void SliceBox(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& start,
              const std::vector<int64_t>& size, int only_axis, Tensor* out_idx,
              Tensor* out_values) {
  const On on(idx, "Slice");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(start.size());
  const KernelArray<int64_t> start_a(start, on), size_a(size, on);
  DeviceBuffer pos(8 * n, on.device);
  const int64_t m = Select(n, InsideAt{Rows(idx), start_a.arg(), size_a.arg(), rank, only_axis},
                           pos.as<uint64_t>(), on);  // the one wait: m sizes the outputs
  *out_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
  *out_values = Tensor::Empty({m}, values.dtype(), idx.device());
  if (m == 0) return;
  if (rank > 0) {
    GatherShiftedKernel<<<Grid(m * rank), kThreads, 0, on.stream>>>(
        Rows(idx), pos.as<uint64_t>(), m, rank, BoxStart{start_a.arg()},
        static_cast<int64_t*>(out_idx->raw_data()));
    CheckLaunch(on);
  }
  GatherValues(values.raw_data(), pos.as<uint64_t>(), m,
               static_cast<int>(DTypeSize(values.dtype())), out_values->raw_data(), on);
}

void SplitEntries(const Tensor& idx, const Tensor& values, int axis,
                  const std::vector<int64_t>& starts, std::vector<Tensor>* piece_idx,
                  std::vector<Tensor>* piece_values) {
  const On on(idx, "Split");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const int64_t num = static_cast<int64_t>(starts.size()) - 1;
  const int size = static_cast<int>(DTypeSize(values.dtype()));
  std::vector<int64_t> ptr(static_cast<size_t>(num + 1), 0);
  PermSort<uint64_t> s(std::max<int64_t>(n, 1), on.device);
  if (n > 0) {
    const KernelArray<int64_t> starts_a(starts, on);  // by value up to 63 pieces
    PieceKeyKernel<<<Grid(n), kThreads, 0, on.stream>>>(Rows(idx), n, rank, axis, starts_a.arg(),
                                                        num, s.keys.Current(), s.perm.Current());
    CheckLaunch(on);
    SortPairs(&s, n, sk::BitsBelow(static_cast<uint64_t>(num)), on);
    DeviceBuffer ptr_d(8 * (num + 1), on.device);
    // The piece keys (below num, so their order as int64 is the same) as the one-column rows of
    // RunPointers' lower bounds.
    LowerBounds(reinterpret_cast<const int64_t*>(s.keys.Current()), n, 1, 0, num,
                ptr_d.as<int64_t>(), on);
    // The one wait: the piece sizes size the outputs.
    cb::Memcpy(ptr.data(), 0, ptr_d.data(), on.device, 8 * (num + 1), cb::CopyKind::kDeviceToHost);
  }
  for (int64_t r = 0; r < num; ++r) {
    const int64_t m = ptr[r + 1] - ptr[r];
    Tensor out_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
    Tensor out_values = Tensor::Empty({m}, values.dtype(), idx.device());
    const uint64_t* perm = s.perm.Current() + ptr[r];
    if (m > 0 && rank > 0) {
      GatherShiftedKernel<<<Grid(m * rank), kThreads, 0, on.stream>>>(
          Rows(idx), perm, m, rank, PieceStart{axis, starts[r]},
          static_cast<int64_t*>(out_idx.raw_data()));
      CheckLaunch(on);
    }
    GatherValues(values.raw_data(), perm, m, size, out_values.raw_data(), on);
    piece_idx->push_back(std::move(out_idx));
    piece_values->push_back(std::move(out_values));
  }
}

}  // namespace tensorkit::sparse_cuda
