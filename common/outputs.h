// tensorkit/common/outputs.h: where an operation's outputs are made, so that one operation can
// write into tensorkit's own tensors or straight into memory a host framework owns.
//
// Glossary
//   output allocator  an OutputAllocator the caller passes to an operation; the operation asks it
//                     for each output by index, dims and dtype, writes the elements there and
//                     calls Commit() once all are written. The default (TensorOutputs,
//                     dense/outputs.h) makes ordinary Tensors; a host framework's (a TensorFlow
//                     kernel's allocate_output, a NumPy array, an Arrow buffer) makes its own
//                     and hands tensorkit a Tensor over it (WrapExternal).
//   output index      k = 0, 1, ...: each operation's header numbers its outputs.
//   numeric output    Allocate(): a contiguous Tensor of exactly the dims and dtype asked, on the
//                     device asked (the operation's), its elements uninitialised.
//   string output     AllocateStrings(): the host's string storage (TensorFlow's tstrings, a
//                     NumPy object array, an Arrow binary column) behind a StringOutput, which
//                     the operation fills with bytes it already holds (Set) or writes in place
//                     once each element's size is known (Build): no std::string in between.
//   commit            an operation calls Commit() after its last write, and not when it throws:
//                     a host makes its outputs visible there, so that a failure half-way (an
//                     allocation refused, a bad record) leaves no half-written output behind.
#ifndef TENSORKIT_COMMON_OUTPUTS_H_
#define TENSORKIT_COMMON_OUTPUTS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"

namespace tensorkit {

class Tensor;  // dense/tensor.h

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// A non-owning reference to a callable R(Args...), for the hot per-element callbacks of
// StringOutput: one indirect call, no allocation. The callable must outlive the reference.
template <typename Signature>
class CallRef;
template <typename R, typename... Args>
class CallRef<R(Args...)> {
 public:
  template <typename F>
  CallRef(const F& f)  // NOLINT(runtime/explicit): passed as a lambda at every call site
      : object_(&f),
        call_([](const void* o, Args... a) -> R { return (*static_cast<const F*>(o))(a...); }) {}
  R operator()(Args... a) const { return call_(object_, a...); }

 private:
  const void* object_;
  R (*call_)(const void*, Args...);
};

// Bytes where they lie (a record, a tensor's std::string): arrays of them can be handed to a
// StringOutput whole, with no call per element.
struct ByteSpan {
  const char* data;
  int64_t size;
};

// The elements of one string output, in the host's storage. Calls cover disjoint ranges of
// elements and set each element once; they may come from several threads at once (an
// operation's parallel tasks) and in any order, unless InOrder() says otherwise.
class StringOutput {
 public:
  virtual ~StringOutput() = default;

  // Elements [begin, end) get bytes(i)'s bytes, read during the call.
  virtual void Set(int64_t begin, int64_t end, CallRef<std::string_view(int64_t)> bytes);
  // Elements [begin, end) get the bytes of spans[0, end - begin).
  virtual void SetSpans(int64_t begin, int64_t end, const ByteSpan* spans);
  // Elements [begin, end) get size(i) bytes each, written by write(i, dst) into dst (room for
  // exactly size(i) bytes) during the call. The sizes come first, as an Arrow column's offsets
  // need them; a tstring or a Python bytes object is sized and then written, one element at a
  // time.
  virtual void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
                     CallRef<void(int64_t, char*)> write) = 0;
  // True when the calls must come from one thread in increasing order of `begin` (an Arrow
  // column appends); operations then write the whole output in one call.
  virtual bool InOrder() const { return false; }
};

// Where an operation makes its outputs (see the glossary).
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;

  // Numeric output k: a contiguous Tensor of exactly `dims` and `dtype` on `device`. A
  // failure throws (Error(kResourceExhausted) or the host's own error).
  virtual Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) = 0;
  // String output k of `dims` (CPU). Owned by the allocator, valid until it goes. The default
  // makes a kString Tensor through Allocate and writes its std::strings.
  virtual StringOutput* AllocateStrings(int k, const std::vector<int64_t>& dims);
  // Every output is written; the host may show them now (see the glossary).
  virtual void Commit() {}

 protected:
  // The default AllocateStrings' writers.
  std::vector<std::unique_ptr<StringOutput>> owned_strings_;
};

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline void StringOutput::Set(int64_t begin, int64_t end,
                              CallRef<std::string_view(int64_t)> bytes) {
  Build(
      begin, end, [&](int64_t i) { return static_cast<int64_t>(bytes(i).size()); },
      [&](int64_t i, char* dst) {
        const std::string_view s = bytes(i);
        if (!s.empty()) std::memcpy(dst, s.data(), s.size());
      });
}

inline void StringOutput::SetSpans(int64_t begin, int64_t end, const ByteSpan* spans) {
  Set(begin, end, [&](int64_t i) {
    const ByteSpan& s = spans[i - begin];
    return std::string_view(s.data, static_cast<size_t>(s.size));
  });
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_OUTPUTS_H_
