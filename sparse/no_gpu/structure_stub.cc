// Linked when tensorkit is built without CUDA. These are never reached (no tensor can be
// allocated on a CUDA device in such a build), but a clear Error beats a crash if they were.
#include "tensorkit/common/error.h"
#include "tensorkit/sparse/cuda/structure.h"

namespace tensorkit::sparse_cuda {
namespace {

[[noreturn]] void NoCuda(const char* op) {
  Throw(ErrorCode::kUnsupported, op,
        ": a CUDA device was requested but tensorkit was built without CUDA; rebuild with "
        "TENSORKIT_CUDA=ON");
}

}  // namespace

int64_t FirstOutOfBounds(const Tensor&, const std::vector<int64_t>&, std::vector<int64_t>*) {
  NoCuda("ValidateIndices");
}
int64_t FirstOutOfBoundsOn(const Tensor&, int, int64_t, std::vector<int64_t>*) { NoCuda("Split"); }
int64_t FirstUnordered(const Tensor&, const std::vector<int>&, bool, std::vector<int64_t>*) {
  NoCuda("ValidateIndices");
}
int64_t FirstRepeat(const Tensor&, const std::vector<int64_t>&, int64_t*, std::vector<int64_t>*) {
  NoCuda("ValidateIndices");
}
void SortEntries(const Tensor&, const Tensor&, const std::vector<int64_t>&, const std::vector<int>&,
                 Tensor*, Tensor*) {
  NoCuda("Reorder");
}
bool MergeRuns(const Tensor&, const Tensor&, Tensor*, Tensor*, const MergeRule&) {
  NoCuda("Coalesce");
}
Tensor GatherAt(const Tensor&, const Tensor&, const std::vector<int64_t>&) { NoCuda("Mul"); }
void Scatter(const Tensor&, const Tensor&, Tensor*) { NoCuda("ToDense"); }
void Nonzeros(const Tensor&, Tensor*, Tensor*) { NoCuda("FromDense"); }
Tensor RunPointers(const Tensor&, int, int64_t) { NoCuda("FromSparse"); }
Tensor ExpandPointers(const Tensor&, const Tensor&, int) { NoCuda("ToSparse"); }
Tensor PermuteColumns(const Tensor&, const std::vector<int>&) { NoCuda("Permute"); }
void SliceBox(const Tensor&, const Tensor&, const std::vector<int64_t>&,
              const std::vector<int64_t>&, int, Tensor*, Tensor*) {
  NoCuda("Slice");
}
void SplitEntries(const Tensor&, const Tensor&, int, const std::vector<int64_t>&,
                  std::vector<Tensor>*, std::vector<Tensor>*) {
  NoCuda("Split");
}
void CopyRowsShifted(const Tensor&, int, int64_t, int64_t, Tensor*) { NoCuda("Concat"); }
std::vector<int64_t> RunHeads(const Tensor&, const std::vector<int>&, std::vector<int64_t>*) {
  NoCuda("group");
}

}  // namespace tensorkit::sparse_cuda
