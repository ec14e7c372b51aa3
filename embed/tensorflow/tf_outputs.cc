#include "tensorkit/embed/tensorflow/tf_outputs.h"

#include <string>
#include <utility>

#include "tensorkit/dense/outputs.h"

namespace tensorkit::tf {

namespace {

// The tstrings of a TensorFlow string tensor.
class TfStrings : public StringOutput {
 public:
  explicit TfStrings(tfw::Tensor* t) : s_(t->flat<tfw::tstring>().data()) {}
  void Set(int64_t begin, int64_t end, CallRef<std::string_view(int64_t)> bytes) override {
    for (int64_t i = begin; i < end; ++i) {
      const std::string_view v = bytes(i);
      s_[i].assign(v.data(), v.size());
    }
  }
  void SetSpans(int64_t begin, int64_t end, const ByteSpan* spans) override {
    const int64_t n = end - begin;
    tfw::tstring* to = s_ + begin;
    for (int64_t i = 0; i < n; ++i) {
      // The bytes of consecutive values often lie a record apart: fetched ahead, as no
      // prefetcher guesses the stride.
      if (i + 16 < n) __builtin_prefetch(spans[i + 16].data);
      to[i].assign(spans[i].data, static_cast<size_t>(spans[i].size));
    }
  }
  void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
             CallRef<void(int64_t, char*)> write) override {
    for (int64_t i = begin; i < end; ++i) {
      s_[i].resize_uninitialized(static_cast<size_t>(size(i)));
      write(i, s_[i].mdata());
    }
  }

 private:
  tfw::tstring* s_;
};

}  // namespace

TfOutputs::TfOutputs(tfw::OpKernelContext* ctx, std::vector<int> slots)
    : ctx_(ctx), slots_(std::move(slots)) {}

int TfOutputs::SlotOf(int k) const {
  if (slots_.empty()) return k;
  TK_CHECK(k >= 0 && k < static_cast<int>(slots_.size()), kInternal,
           ctx_->op_kernel().type_string(), ": output ", k, " has no slot among ", slots_.size());
  return slots_[k];
}

tfw::Tensor* TfOutputs::Stage(int k, const std::vector<int64_t>& dims) {
  const int slot = SlotOf(k);
  tfw::TensorShape shape;
  const absl::Status s = tfw::TensorShape::BuildTensorShape(dims, &shape);
  if (!s.ok()) throw StatusError(s);
  auto st = std::make_unique<Staged>(Staged{k, slot, {}});
  st->tensor = tfw::Tensor(ctx_->get_allocator(ctx_->output_alloc_attr(slot)),
                           ctx_->expected_output_dtype(slot), shape);
  if (!st->tensor.IsInitialized()) {
    throw StatusError(absl::ResourceExhaustedError(
        ctx_->op_kernel().type_string() + ": could not allocate output " + std::to_string(slot) +
        " of shape " + shape.DebugString()));
  }
  AdviseFreshPages(st->tensor);
  staged_.push_back(std::move(st));
  return &staged_.back()->tensor;
}

Tensor TfOutputs::Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) {
  const char* op = ctx_->op_kernel().type_string().c_str();
  TK_CHECK(device.is_cpu(), kUnsupported, op, ": output ", k, " on ", device.ToString(),
           "; the kernel's outputs are on the CPU");
  if (SlotOf(k) < 0) {
    if (k >= static_cast<int>(scratch_.size())) scratch_.resize(static_cast<size_t>(k) + 1);
    return scratch_[k] = Tensor::Empty(dims, dtype, device);
  }
  const tfw::DataType tf_dtype = ctx_->expected_output_dtype(SlotOf(k));
  const std::optional<DType> bit = BitDType(tf_dtype);
  TK_CHECK(bit && DTypeSize(*bit) == DTypeSize(dtype), kInternal, op, ": output ", k, " is ",
           DTypeName(dtype), " but the kernel's output ", SlotOf(k), " is ",
           tfw::DataTypeString(tf_dtype));
  return Wrap(*Stage(k, dims), dtype, dims);
}

StringOutput* TfOutputs::AllocateStrings(int k, const std::vector<int64_t>& dims) {
  if (SlotOf(k) < 0) return OutputAllocator::AllocateStrings(k, dims);
  const tfw::DataType tf_dtype = ctx_->expected_output_dtype(SlotOf(k));
  TK_CHECK(tf_dtype == tfw::DT_STRING, kInternal, ctx_->op_kernel().type_string(), ": output ", k,
           " is strings but the kernel's output ", SlotOf(k), " is ",
           tfw::DataTypeString(tf_dtype));
  owned_strings_.push_back(std::make_unique<TfStrings>(Stage(k, dims)));
  return owned_strings_.back().get();
}

void TfOutputs::Commit() {
  if (committed_) return;
  committed_ = true;
  for (const auto& st : staged_) ctx_->set_output(st->slot, std::move(st->tensor));
}

bool TfOutputs::Made(int k) const {
  for (const auto& st : staged_) {
    if (st->k == k) return true;
  }
  return Scratch(k).defined();
}

Tensor TfOutputs::Scratch(int k) const {
  return k >= 0 && k < static_cast<int>(scratch_.size()) ? scratch_[k] : Tensor();
}

}  // namespace tensorkit::tf
