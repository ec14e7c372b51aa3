// JaggedTensor and KeyedJaggedTensor: construction, validation, accessors and views.
#include "tensorkit/features/jagged.h"

#include <mutex>
#include <unordered_set>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"

namespace tensorkit {

namespace fi = features_internal;

// --- JaggedTensor ----------------------------------------------------------------------------

// The host copy of a CUDA jagged tensor's offsets: fetched by the first caller that needs it
// (once, whatever the threads), then kept; copies of the tensor share it, as they share the
// offsets.
struct JaggedTensor::HostCopy {
  std::once_flag once;
  Tensor host;
};

void JaggedTensor::SetOffsets(Tensor offsets, Tensor host) {
  offsets_ = std::move(offsets);
  host_copy_ = std::make_shared<HostCopy>();
  host_copy_->host = offsets_.device().is_cpu() ? offsets_ : std::move(host);
}

const Tensor& JaggedTensor::host_offsets() const {
  if (host_copy_ == nullptr) return offsets_;  // default-constructed: undefined
  HostCopy& c = *host_copy_;
  std::call_once(c.once, [&] {
    if (!c.host.defined()) c.host = offsets_.HostContiguous();
  });
  return c.host;
}

JaggedTensor JaggedTensor::FromOffsets(Tensor values, Tensor offsets, Tensor weights) {
  const char* op = "JaggedTensor::FromOffsets";
  fi::CheckJaggedValues(values, op);
  TK_CHECK(offsets.defined() && offsets.NumAxes() == 1 && offsets.Dim(0) >= 1, kShapeMismatch, op,
           ": offsets must be a 1-D tensor [B + 1] with at least one element, got ",
           offsets.defined() ? ShapeString(offsets.Dims()) : std::string("an undefined tensor"));
  TK_CHECK(offsets.dtype() == DType::kInt64, kDTypeMismatch, op, ": offsets must be int64, got ",
           DTypeName(offsets.dtype()), "; convert them with Converted(offsets, DType::kInt64)");
  CheckSameDevice(values.device(), offsets.device(), op, "values", "offsets");
  JaggedTensor jt;
  const Tensor contiguous = offsets.Contiguous();
  const Tensor host = fi::HostOffsets(contiguous);
  fi::CheckOffsets(host.data<int64_t>(), host.Dim(0), values.Dim(0), op);
  jt.SetOffsets(contiguous, host);
  jt.values_ = std::move(values);
  if (weights.defined()) jt = jt.WithWeights(std::move(weights));
  return jt;
}

JaggedTensor JaggedTensor::FromLengths(Tensor values, Tensor lengths, Tensor weights) {
  const char* op = "JaggedTensor::FromLengths";
  fi::CheckJaggedValues(values, op);
  TK_CHECK(lengths.defined() && lengths.NumAxes() == 1, kShapeMismatch, op,
           ": lengths must be a 1-D tensor [B], got ",
           lengths.defined() ? ShapeString(lengths.Dims()) : std::string("an undefined tensor"));
  CheckSameDevice(values.device(), lengths.device(), op, "values", "lengths");
  JaggedTensor jt;
  if (OnCuda(lengths)) {
    // The offsets stay on the device; a bad length is named by the host check, which throws.
    fi::CheckLengthsDType(lengths, op);
    const Tensor len = Converted(lengths, DType::kInt64).Contiguous();
    Tensor off = features_cuda::OffsetsFromLengthsOnDevice(len, values.Dim(0), op);
    if (!off.defined()) off = fi::OffsetsFromLengths(lengths, values.Dim(0), op).To(len.device());
    jt.SetOffsets(std::move(off));
  } else {
    jt.SetOffsets(fi::OffsetsFromLengths(lengths, values.Dim(0), op));
  }
  jt.values_ = std::move(values);
  if (weights.defined()) jt = jt.WithWeights(std::move(weights));
  return jt;
}

void JaggedTensor::CheckDefined(const char* op) const {
  TK_CHECK(defined(), kInvalidArgument, op,
           ": the jagged tensor is empty (default-constructed); make one with "
           "JaggedTensor::FromOffsets or FromLengths");
}

const int64_t* JaggedTensor::offsets_data() const {
  CheckDefined("JaggedTensor::offsets_data");
  return host_offsets().data<int64_t>();
}

Tensor JaggedTensor::lengths() const {
  const int64_t b = batch_size();
  Tensor out = Tensor::Empty({b}, DType::kInt64);
  if (b > 0) {
    const int64_t* off = offsets_data();
    int64_t* len = out.data<int64_t>();
    for (int64_t i = 0; i < b; ++i) len[i] = off[i + 1] - off[i];
  }
  return device().is_cpu() ? out : out.To(device());
}

Tensor JaggedTensor::Row(int64_t i) const { return RowOf(values_, i, "JaggedTensor::Row"); }

Tensor JaggedTensor::RowWeights(int64_t i) const {
  TK_CHECK(has_weights(), kInvalidArgument,
           "JaggedTensor::RowWeights: the jagged tensor has no weights; add them with "
           "WithWeights(weights)");
  return RowOf(weights_, i, "JaggedTensor::RowWeights");
}

Tensor JaggedTensor::RowOf(const Tensor& t, int64_t i, const char* op) const {
  const int64_t b = batch_size();
  TK_CHECK(i >= 0 && i < b, kOutOfRange, op, ": row ", i, " is out of range for a batch of ", b,
           " rows");
  const int64_t* off = offsets_data();
  return SliceRows(t, off[i], off[i + 1]);
}

JaggedTensor JaggedTensor::WithWeights(Tensor weights) const {
  const char* op = "JaggedTensor::WithWeights";
  CheckDefined(op);
  fi::CheckWeights(weights, num_values(), values_, op);
  JaggedTensor jt = *this;
  jt.weights_ = std::move(weights);
  return jt;
}

// --- KeyedJaggedTensor -----------------------------------------------------------------------

KeyedJaggedTensor::KeyedJaggedTensor(std::vector<std::string> keys, Tensor values, Tensor lengths,
                                     Tensor weights) {
  const char* op = "KeyedJaggedTensor";
  fi::CheckJaggedValues(values, op);
  std::unordered_set<std::string> seen;
  for (size_t f = 0; f < keys.size(); ++f) {
    TK_CHECK(!keys[f].empty(), kInvalidArgument, op, ": key ", f,
             " is an empty string; every feature needs a name");
    TK_CHECK(seen.insert(keys[f]).second, kInvalidArgument, op, ": key \"", keys[f],
             "\" appears twice; keys must be unique");
  }
  const int64_t num_keys = static_cast<int64_t>(keys.size());
  TK_CHECK(lengths.defined() && lengths.NumAxes() == 2 && lengths.Dim(0) == num_keys,
           kShapeMismatch, op, ": lengths must be [F, B] with F = ", num_keys,
           " (the number of keys), got ",
           lengths.defined() ? ShapeString(lengths.Dims()) : std::string("an undefined tensor"));
  CheckSameDevice(values.device(), lengths.device(), op, "values", "lengths");
  batch_size_ = lengths.Dim(1);
  const Tensor flat = *View(lengths.Contiguous(), {lengths.NumElements()});
  host_offsets_ = fi::OffsetsFromLengths(flat, values.Dim(0), op);
  offsets_ = lengths.device().is_cpu() ? host_offsets_ : host_offsets_.To(lengths.device());
  lengths_ = Converted(lengths.Contiguous(), DType::kInt64);
  if (weights.defined()) fi::CheckWeights(weights, values.Dim(0), values, op);
  keys_ = std::move(keys);
  values_ = std::move(values);
  weights_ = std::move(weights);
}

int KeyedJaggedTensor::KeyIndex(const std::string& key) const {
  return KeyIndexFor(key, "KeyedJaggedTensor");
}

int KeyedJaggedTensor::KeyIndexFor(const std::string& key, const char* op) const {
  for (size_t f = 0; f < keys_.size(); ++f)
    if (keys_[f] == key) return static_cast<int>(f);
  std::string all;
  for (const auto& k : keys_) all += (all.empty() ? "\"" : ", \"") + k + "\"";
  Throw(ErrorCode::kInvalidArgument, op, ": no feature named \"", key, "\"; the keys are ",
        all.empty() ? std::string("none") : all);
}

std::vector<int64_t> KeyedJaggedTensor::KeyOffsets() const {
  std::vector<int64_t> out(keys_.size() + 1, 0);
  if (!host_offsets_.defined()) return out;
  const int64_t* off = host_offsets_.data<int64_t>();
  for (size_t f = 0; f <= keys_.size(); ++f) out[f] = off[static_cast<int64_t>(f) * batch_size_];
  return out;
}

JaggedTensor KeyedJaggedTensor::Get(const std::string& key) const {
  const int64_t f = KeyIndex(key);
  const int64_t b = batch_size_;
  const int64_t* off = host_offsets_.data<int64_t>();
  const int64_t begin = off[f * b];
  Tensor offsets = Tensor::Empty({b + 1}, DType::kInt64);
  int64_t* out = offsets.data<int64_t>();
  for (int64_t i = 0; i <= b; ++i) out[i] = off[f * b + i] - begin;
  if (!device().is_cpu()) offsets = offsets.To(device());
  const int64_t end = off[(f + 1) * b];
  Tensor weights = has_weights() ? SliceRows(weights_, begin, end) : Tensor();
  return JaggedTensor::FromOffsets(SliceRows(values_, begin, end), offsets, weights);
}

}  // namespace tensorkit
