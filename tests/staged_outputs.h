// A test OutputAllocator that stands for a host framework: it keeps each output aside (staged)
// and shows them only at Commit, and can refuse output `fail_at`, so that tests can check that
// a failure half-way leaves nothing shown.
#ifndef TENSORKIT_TESTS_STAGED_OUTPUTS_H_
#define TENSORKIT_TESTS_STAGED_OUTPUTS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/outputs.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit::testing {

class StagedOutputs : public OutputAllocator {
 public:
  explicit StagedOutputs(int fail_at) : fail_at_(fail_at) {}
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override {
    TK_CHECK(k != fail_at_, kResourceExhausted, "StagedOutputs: no memory for output ", k);
    staged.push_back(Tensor::Zeros(dims, dtype, device));
    return staged.back();
  }
  void Commit() override {
    ++commits;
    shown = staged;
  }
  std::vector<Tensor> staged, shown;
  int commits = 0;

 private:
  int fail_at_;
};

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_STAGED_OUTPUTS_H_
