// The stable sort of entries on the device (structure.h): each axis a field of key words
// (keys.h), CUB's stable radix sort least significant word first, then the rows decoded from the
// one sorted word or gathered through the permutation, and the values gathered as bytes.
#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
namespace {

template <typename P>
__global__ void DecodeKernel(const uint64_t* keys, int64_t n, int rank, ArgArray<int> word,
                             ArgArray<int> shift, ArgArray<uint64_t> mask, int64_t* out) {
  const int* wd = word.data();
  const int* sh = shift.data();
  const uint64_t* mk = mask.data();
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    const int a = static_cast<int>(i - e * rank);
    out[i] = wd[a] < 0 ? 0 : sk::FieldOf(keys[e], sh[a], mk[a]);
  }
}

template <typename P>
void SortEntriesAs(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                   const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values,
                   const On& on) {
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(shape.size());
  const sk::KeyWords kw = sk::MakeKeyWords(shape, order);
  std::vector<uint64_t> mask(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) {
    const int bits = sk::BitsBelow(static_cast<uint64_t>(shape[a]));
    mask[a] = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  }
  const KeyLayout layout(kw, on);
  const KernelArray<uint64_t> mask_a(mask, on);
  PermSort<P> s(n, on.device);
  SortRows(Rows(idx), n, rank, kw, layout, &s, on);
  int64_t* out = static_cast<int64_t*>(sorted_idx->raw_data());
  if (n * rank > 0) {
    if (kw.num_words() <= 1) {  // every field is in the sorted word: decode, no gather
      DecodeKernel<P><<<Grid(n * rank), kThreads, 0, on.stream>>>(
          s.keys.Current(), n, rank, layout.word.arg(), layout.shift.arg(), mask_a.arg(), out);
    } else {
      GatherRowsKernel<P>
          <<<Grid(n * rank), kThreads, 0, on.stream>>>(Rows(idx), s.perm.Current(), n, rank, out);
    }
    CheckLaunch(on);
  }
  GatherValues(values.raw_data(), s.perm.Current(), n, static_cast<int>(DTypeSize(values.dtype())),
               sorted_values->raw_data(), on);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

void SortEntries(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                 const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values) {
  const On on(idx, "Reorder");
  const int64_t n = idx.Dim(0);
  *sorted_idx = Tensor::Empty({n, static_cast<int64_t>(shape.size())}, DType::kInt64, idx.device());
  *sorted_values = Tensor::Empty({n}, values.dtype(), idx.device());
  if (n == 0) return;
  if (FitsUint32(n)) {
    SortEntriesAs<uint32_t>(idx, values, shape, order, sorted_idx, sorted_values, on);
  } else {
    SortEntriesAs<uint64_t>(idx, values, shape, order, sorted_idx, sorted_values, on);
  }
}

}  // namespace tensorkit::sparse_cuda
