// tensorkit/dense/external.h: tensors over memory that tensorkit does not own.
//
// Glossary
//   external memory  a buffer owned by a host framework (a TensorFlow custom op's input, a NumPy
//                    array, a PyTorch tensor); tensorkit reads and writes it in place and calls
//                    the owner's deleter when the last Tensor referring to it goes away.
//   DLPack           the common in-memory tensor exchange struct (dlpack/dlpack.h);
//                    FromDLPack takes ownership of a DLManagedTensor, ToDLPack hands one out.
//   Strides are in elements, as everywhere in tensorkit. Negative strides are accepted; a
//   stride of 0 on an axis with dim > 1 (an expanded/broadcast view) is rejected, since a
//   tensorkit view never aliases elements: copy such an input first. A tensor with a dim 0 has
//   no element, so whatever strides it comes with (NumPy gives 0 to the axes in front of a dim
//   0) are replaced by C order's.
#ifndef TENSORKIT_DENSE_EXTERNAL_H_
#define TENSORKIT_DENSE_EXTERNAL_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/storage.h"
#include "tensorkit/dense/tensor.h"

struct DLManagedTensor;  // from dlpack/dlpack.h; public headers need not include it

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// A Tensor over `data` (the element with all-zero index) with public `dims` and `strides`
// (empty strides: C order). `deleter` (may be empty) runs once no Tensor refers to the memory.
Tensor WrapExternal(void* data, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, DType dtype, Device device,
                    Storage::Deleter deleter = {});

// Takes ownership of `managed` (its deleter runs when the last Tensor goes). Throws Error, and
// still calls the deleter, for dtypes, devices or layouts tensorkit cannot represent.
Tensor FromDLPack(DLManagedTensor* managed);
// A DLManagedTensor sharing `t`'s storage; the consumer must call its deleter exactly once.
// Strings cannot be exported (Error).
DLManagedTensor* ToDLPack(const Tensor& t);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_EXTERNAL_H_
