// embed/tensorflow/tf_outputs.h: the OutputAllocator of a TensorFlow kernel (common/outputs.h):
// tensorkit operations write their outputs straight into the tensors TensorFlow allocates for
// the kernel's outputs, numbers as wrapped buffers and strings as tstrings.
//
// Glossary
//   slot      the kernel's output index that an operation's output k goes to (slots[k]); -1 for
//             an output the kernel does not pass on (scratch: an ordinary tensorkit Tensor).
//   staged    outputs are allocated apart from the context (with the allocator it would use)
//             and handed to it by Commit(), all at once: a kernel that fails half-way shows no
//             output.
#ifndef TENSORKIT_EMBED_TENSORFLOW_TF_OUTPUTS_H_
#define TENSORKIT_EMBED_TENSORFLOW_TF_OUTPUTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "tensorkit/common/outputs.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"

namespace tensorkit::tf {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class TfOutputs : public OutputAllocator {
 public:
  // Output k goes to the kernel's output slots[k] (k itself when `slots` is empty).
  explicit TfOutputs(tfw::OpKernelContext* ctx, std::vector<int> slots = {});

  // A TensorFlow tensor of the slot's dtype (whose elements must have dtype's size: int64 for
  // complex64 and uint64, and so on) wrapped as `dtype`. CPU only.
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override;
  // A TensorFlow string tensor, written as tstrings.
  StringOutput* AllocateStrings(int k, const std::vector<int64_t>& dims) override;
  // set_output of every staged output.
  void Commit() override;

  // Whether output k was allocated (staged or scratch).
  bool Made(int k) const;
  // Scratch output k once allocated (undefined for the others).
  Tensor Scratch(int k) const;

 private:
  struct Staged {
    int k, slot;
    tfw::Tensor tensor;
  };
  int SlotOf(int k) const;
  tfw::Tensor* Stage(int k, const std::vector<int64_t>& dims);

  tfw::OpKernelContext* ctx_;
  std::vector<int> slots_;
  std::vector<std::unique_ptr<Staged>> staged_;
  std::vector<Tensor> scratch_;  // by k
  bool committed_ = false;
};

}  // namespace tensorkit::tf

#endif  // TENSORKIT_EMBED_TENSORFLOW_TF_OUTPUTS_H_
