// KeyedJaggedTensor's batch operations: Permute, Concat, Split and ToSparse. Each is one Gather
// of row blocks: the lengths and offsets of every block (on the host, from the host offsets),
// then all values and weights in one parallel CopyBlocks pass, or, for tensors on a CUDA device,
// one gather kernel each over the output's elements (jagged_device.h's item blocks).
#include <string>
#include <unordered_set>
#include <utility>

#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/jagged_internal.h"

namespace tensorkit {

namespace fi = features_internal;
namespace ji = jagged_internal;

struct KeyedJaggedTensor::RowBlock {
  int src = 0;           // which source
  int64_t src_row = 0;   // its first row among the source's F * B rows
  int64_t dst_row = 0;   // its first row among the output's
  int64_t num_rows = 0;  // the rows of one feature of one source: at most its batch size
};

namespace {

// The dims of `values` with axis 0 set to n.
std::vector<int64_t> WithRows(const Tensor& values, int64_t n) {
  std::vector<int64_t> dims = values.Dims();
  dims[0] = n;
  return dims;
}

// Elements per item (dims[1:] multiplied) of values with at least one item, else 0.
int64_t ItemElements(const Tensor& values) {
  return values.Dim(0) > 0 ? values.NumElements() / values.Dim(0) : 0;
}

// Address of item `item` of contiguous `t` with `inner` elements per item.
const void* ItemAddress(const Tensor& t, int64_t item, int64_t inner) {
  return static_cast<const char*>(t.raw_data()) + item * inner * DTypeSize(t.dtype());
}

// What Concat needs of part p whichever way it joins: part 0's device, value dtype and item dims,
// and weights of part 0's dtype or none in both.
void CheckConcatPart(const KeyedJaggedTensor& first, const KeyedJaggedTensor& part, size_t p,
                     const char* op) {
  const std::string name = "part " + std::to_string(p);
  CheckSameDevice(first.device(), part.device(), op, "part 0", name.c_str());
  TK_CHECK(part.values().dtype() == first.values().dtype(), kDTypeMismatch, op, ": part ", p,
           "'s values are ", DTypeName(part.values().dtype()), " but part 0's are ",
           DTypeName(first.values().dtype()), "; convert them with Converted(values, dtype)");
  TK_CHECK(WithRows(part.values(), 0) == WithRows(first.values(), 0), kShapeMismatch, op, ": part ",
           p, "'s values are ", ShapeString(part.values().Dims()), " but part 0's are ",
           ShapeString(first.values().Dims()), "; the items (dims after the first) must agree");
  TK_CHECK(part.has_weights() == first.has_weights(), kInvalidArgument, op, ": part ",
           part.has_weights() ? p : 0, " has weights but part ", part.has_weights() ? 0 : p,
           " has none; give every part weights or none");
  TK_CHECK(!first.has_weights() || part.weights().dtype() == first.weights().dtype(),
           kDTypeMismatch, op, ": part ", p, "'s weights are ", DTypeName(part.weights().dtype()),
           " but part 0's are ", DTypeName(first.weights().dtype()),
           "; convert them with Converted(weights, dtype)");
}

}  // namespace

void KeyedJaggedTensor::CheckDefined(const char* op) const {
  TK_CHECK(values_.defined(), kInvalidArgument, op,
           ": the keyed jagged tensor is empty (default-constructed); make one with "
           "KeyedJaggedTensor(keys, values, lengths)");
}

KeyedJaggedTensor KeyedJaggedTensor::Gather(const std::vector<const KeyedJaggedTensor*>& srcs,
                                            const std::vector<RowBlock>& blocks,
                                            std::vector<std::string> keys, int64_t batch_size,
                                            const char* op) {
  const KeyedJaggedTensor& first = *srcs[0];
  const int64_t num_keys = static_cast<int64_t>(keys.size());
  KeyedJaggedTensor out;
  out.lengths_ = Tensor::Empty({num_keys, batch_size}, DType::kInt64);
  const int64_t num_rows = out.lengths_.NumElements();
  out.offsets_ = Tensor::Empty({num_rows + 1}, DType::kInt64);
  int64_t* len = num_rows > 0 ? out.lengths_.data<int64_t>() : nullptr;
  int64_t* off = out.offsets_.data<int64_t>();
  // Where each block's values start in the output: a running sum in output order.
  const size_t nb = blocks.size();
  std::vector<int64_t> base(nb + 1, 0);
  for (size_t k = 0; k < nb; ++k) {
    const RowBlock& b = blocks[k];
    const int64_t* so = srcs[b.src]->host_offsets_.data<int64_t>();
    base[k + 1] = base[k] + (so[b.src_row + b.num_rows] - so[b.src_row]);
  }
  off[0] = 0;
  ParallelFor(0, static_cast<int64_t>(nb), 1, [&](int64_t kb, int64_t ke) {
    for (int64_t k = kb; k < ke; ++k) {
      const RowBlock& b = blocks[k];
      const KeyedJaggedTensor& s = *srcs[b.src];
      const int64_t* so = s.host_offsets_.data<int64_t>() + b.src_row;
      const int64_t shift = base[k] - so[0];
      for (int64_t i = 0; i < b.num_rows; ++i) {
        len[b.dst_row + i] = so[i + 1] - so[i];
        off[b.dst_row + i + 1] = so[i + 1] + shift;
      }
    }
  });
  const int64_t total = base[nb];
  const Device device = first.device();
  out.values_ = Tensor::Empty(WithRows(first.values_, total), first.values_.dtype(), device);
  if (first.has_weights()) out.weights_ = Tensor::Empty({total}, first.weights_.dtype(), device);
  out.host_offsets_ = out.offsets_;
  out.keys_ = std::move(keys);
  out.batch_size_ = batch_size;
  // Values (and weights) of every block in one pass; sources made contiguous once each.
  std::vector<Tensor> values(srcs.size()), weights(srcs.size());
  for (size_t p = 0; p < srcs.size(); ++p) {
    values[p] = srcs[p]->values_.Contiguous();
    if (first.has_weights()) weights[p] = srcs[p]->weights_.Contiguous();
  }
  const int64_t inner = ItemElements(out.values_);
  if (OnCuda(out.values_)) {
    GatherOnDevice(srcs, blocks, base, values, weights, inner, &out, op);
    return out;
  }
  const DType vtype = out.values_.dtype();
  const int64_t vsize = DTypeSize(vtype);
  std::vector<ji::CopyBlock> copies;
  copies.reserve(first.has_weights() ? 2 * nb : nb);
  for (size_t k = 0; k < nb; ++k) {
    const RowBlock& b = blocks[k];
    const int64_t src_item = srcs[b.src]->host_offsets_.data<int64_t>()[b.src_row];
    const int64_t n = base[k + 1] - base[k];
    if (n == 0) continue;
    copies.push_back({static_cast<const char*>(values[b.src].raw_data()) + src_item * inner * vsize,
                      static_cast<char*>(out.values_.raw_data()) + base[k] * inner * vsize,
                      n * inner, vtype});
    if (first.has_weights()) {
      const DType wtype = out.weights_.dtype();
      const int64_t wsize = DTypeSize(wtype);
      copies.push_back({static_cast<const char*>(weights[b.src].raw_data()) + src_item * wsize,
                        static_cast<char*>(out.weights_.raw_data()) + base[k] * wsize, n, wtype});
    }
  }
  ji::CopyBlocks(copies);
  return out;
}

void KeyedJaggedTensor::GatherOnDevice(const std::vector<const KeyedJaggedTensor*>& srcs,
                                       const std::vector<RowBlock>& blocks,
                                       const std::vector<int64_t>& base,
                                       const std::vector<Tensor>& values,
                                       const std::vector<Tensor>& weights, int64_t inner,
                                       KeyedJaggedTensor* out, const char* op) {
  // The item blocks of jagged_device.h: the row blocks that hold items, with their sources.
  std::vector<int64_t> starts;
  std::vector<const void*> value_src, weight_src;
  for (size_t k = 0; k < blocks.size(); ++k) {
    if (base[k + 1] == base[k]) continue;
    const RowBlock& b = blocks[k];
    const int64_t item = srcs[b.src]->host_offsets_.data<int64_t>()[b.src_row];
    starts.push_back(base[k]);
    value_src.push_back(ItemAddress(values[b.src], item, inner));
    if (out->has_weights()) weight_src.push_back(ItemAddress(weights[b.src], item, 1));
  }
  starts.push_back(base.back());
  features_cuda::GatherItemBlocksOnDevice(starts, value_src, inner, &out->values_, op);
  if (out->has_weights()) {
    features_cuda::GatherItemBlocksOnDevice(starts, weight_src, 1, &out->weights_, op);
  }
  const Device device = out->values_.device();
  out->offsets_ = out->host_offsets_.To(device);
  out->lengths_ = out->lengths_.To(device);
}

KeyedJaggedTensor KeyedJaggedTensor::Permute(const std::vector<std::string>& keys) const {
  const char* op = "KeyedJaggedTensor::Permute";
  CheckDefined(op);
  std::vector<RowBlock> blocks(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    const int64_t f = KeyIndexFor(keys[k], op);
    blocks[k] = {0, f * batch_size_, static_cast<int64_t>(k) * batch_size_, batch_size_};
  }
  return Gather({this}, blocks, keys, batch_size_, op);
}

KeyedJaggedTensor KeyedJaggedTensor::Concat(const std::vector<KeyedJaggedTensor>& parts) {
  const char* op = "KeyedJaggedTensor::Concat";
  TK_CHECK(!parts.empty(), kInvalidArgument, op, ": needs at least one part");
  const KeyedJaggedTensor& first = parts[0];
  first.CheckDefined(op);
  // Joining batches needs every part's keys to be part 0's; joining keys (TorchRec's concat)
  // needs keys no earlier part has and part 0's batch size.
  bool same_keys = true, new_keys = true;
  std::unordered_set<std::string> seen(first.keys_.begin(), first.keys_.end());
  int64_t batch = first.batch_size_;
  for (size_t p = 1; p < parts.size(); ++p) {
    const KeyedJaggedTensor& part = parts[p];
    part.CheckDefined(op);
    CheckConcatPart(first, part, p, op);
    same_keys = same_keys && part.keys_ == first.keys_;
    size_t repeated = part.keys_.size();  // the first key of this part an earlier part has
    for (size_t k = 0; k < part.keys_.size() && repeated == part.keys_.size(); ++k) {
      if (!seen.insert(part.keys_[k]).second) repeated = k;
    }
    new_keys = new_keys && repeated == part.keys_.size();
    if (same_keys) {
      TK_CHECK(!__builtin_add_overflow(batch, part.batch_size_, &batch), kShapeMismatch, op,
               ": the batch sizes add up to more than int64 holds at part ", p);
      continue;
    }
    if (!new_keys) {
      const auto& a = first.keys_;
      const auto& b = part.keys_;
      size_t k = 0;
      while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
      std::string why;
      if (b == a) {
        why = " has part 0's keys, but an earlier part has other keys";
      } else {
        why = "'s key " + std::to_string(k) + " is " +
              (k < b.size() ? "\"" + b[k] + "\"" : std::string("missing")) + " but part 0's is " +
              (k < a.size() ? "\"" + a[k] + "\"" : std::string("missing")) +
              (repeated < b.size() ? ", and its key \"" + b[repeated] + "\" is in an earlier part"
                                   : std::string(", and an earlier part repeats part 0's keys"));
      }
      Throw(ErrorCode::kInvalidArgument, op, ": part ", p, why,
            "; join batches of the same keys in the same sequence (Permute(parts[0].keys()) "
            "reorders a part), or features whose keys no other part has (TorchRec's concat)");
    }
    TK_CHECK(part.batch_size_ == first.batch_size_, kShapeMismatch, op, ": part ", p,
             " has batch size ", part.batch_size_, " but part 0 has ", first.batch_size_,
             "; joining features of different keys needs one batch size (Split or Concat the "
             "batches first)");
  }
  std::vector<const KeyedJaggedTensor*> srcs(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) srcs[p] = &parts[p];
  std::vector<RowBlock> blocks;
  if (!same_keys) {
    // Each part's features, one block each, after the earlier parts'.
    std::vector<std::string> keys;
    int64_t row = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      for (int64_t f = 0; f < parts[p].num_keys(); ++f) {
        blocks.push_back({static_cast<int>(p), f * batch, row, batch});
        keys.push_back(parts[p].keys_[f]);
        row += batch;
      }
    }
    return Gather(srcs, blocks, std::move(keys), batch, op);
  }
  blocks.reserve(parts.size() * first.keys_.size());
  for (int64_t f = 0; f < first.num_keys(); ++f) {
    int64_t row = f * batch;
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t b = parts[p].batch_size_;
      blocks.push_back({static_cast<int>(p), f * b, row, b});
      row += b;
    }
  }
  return Gather(srcs, blocks, first.keys_, batch, op);
}

std::vector<KeyedJaggedTensor> KeyedJaggedTensor::Split(
    const std::vector<int64_t>& batch_sizes) const {
  const char* op = "KeyedJaggedTensor::Split";
  CheckDefined(op);
  int64_t sum = 0;
  for (size_t k = 0; k < batch_sizes.size(); ++k) {
    const int64_t s = batch_sizes[k];
    TK_CHECK(s >= 0, kInvalidArgument, op, ": batch_sizes[", k, "] = ", s,
             " is negative; every piece needs a size >= 0");
    TK_CHECK(s <= batch_size_ - sum, kShapeMismatch, op, ": batch_sizes add up to more than ",
             batch_size_, " (the batch size) at batch_sizes[", k, "] = ", s);
    sum += s;
  }
  TK_CHECK(sum == batch_size_, kShapeMismatch, op, ": batch_sizes add up to ", sum,
           " but the batch has ", batch_size_, " rows; they must be equal");
  std::vector<KeyedJaggedTensor> out;
  out.reserve(batch_sizes.size());
  std::vector<RowBlock> blocks(keys_.size());
  int64_t start = 0;
  for (const int64_t s : batch_sizes) {
    for (int64_t f = 0; f < num_keys(); ++f) blocks[f] = {0, f * batch_size_ + start, f * s, s};
    out.push_back(Gather({this}, blocks, keys_, s, op));
    start += s;
  }
  return out;
}

SparseTensor KeyedJaggedTensor::ToSparse(const std::string& key) const {
  const char* op = "KeyedJaggedTensor::ToSparse";
  CheckDefined(op);
  KeyIndexFor(key, op);
  return Get(key).ToSparse();
}

}  // namespace tensorkit
